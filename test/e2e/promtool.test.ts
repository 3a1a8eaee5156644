/**
 * `promtool check metrics` (Debian's `prometheus` package) on the live `/metrics` of the whole
 * exporter, fetched over HTTP, after it has polled a simulator with generated traffic (failures,
 * retries, cancellations, slow operations, auto-suspends, availability checks) on its own
 * schedule: endpoints in every state (init, active, idle; auto-suspend off: +Inf), an unknown
 * operation status, operation retries, a blocked project, API retries and a rate-limit pause,
 * every family (`detail: full`) and the per-project histograms on. promtool prints its lint
 * findings on stdout or stderr: any line is a failure, as is a non-zero exit code.
 */
import { spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestSimulator } from "../support/simulator.js";
import { addApiFaults, startTrafficSimulator } from "./support/traffic-simulator.js";
import { findBinary, requireBinary } from "./support/binaries.js";
import {
  parseSamples,
  scrape,
  startTestExporter,
  tempDir,
  waitFor,
  type Sample,
  type TestExporter,
} from "./support/exporter.js";
import { runsThen } from "../support/operation-steps.js";

const TRAFFIC_PROJECTS = 6;

let t: TestSimulator | undefined;
let exporter: TestExporter | undefined;
let state: { dir: string; remove(): Promise<void> } | undefined;
/** The project whose state file is corrupt (blocked), and the one with endpoints in each state. */
let blockedProject: string;
let statesProject: string;
let rendering: string;

function samplesNamed(text: string, name: string): Sample[] {
  return parseSamples(text).filter((s) => s.name === name);
}

/** True once the exporter serves everything the check needs to see. */
function complete(text: string): boolean {
  const up = samplesNamed(text, "pgcp_project_up");
  const upCount = up.filter((s) => s.value === 1).length;
  const catchingUp = samplesNamed(text, "pgcp_project_catching_up").some((s) => s.value === 1);
  const states = samplesNamed(text, "pgcp_endpoint_state").filter(
    (s) => s.labels.project === statesProject && s.value === 1,
  );
  const reasons = new Set(samplesNamed(text, "pgcp_api_retries_total").map((s) => s.labels.reason));
  return (
    // Every project but the blocked one polled, none still catching up.
    upCount === TRAFFIC_PROJECTS &&
    !catchingUp &&
    new Set(states.map((s) => s.labels.state)).size === 3 &&
    reasons.has("http_503") &&
    reasons.has("http_429") &&
    samplesNamed(text, "pgcp_api_rate_limit_pauses_total").length > 0 &&
    samplesNamed(text, "pgcp_operation_retries_total").length > 0 &&
    samplesNamed(text, "pgcp_project_blocked").length === 1
  );
}

beforeAll(async () => {
  if (findBinary("promtool") === undefined) return;
  const wallStartMs = Date.now();
  t = await startTrafficSimulator(
    { projects: TRAFFIC_PROJECTS, operationsPerMinute: 40, failureShare: 0.15 },
    wallStartMs,
  );
  const { sim } = t;

  // A project with an endpoint in each state: idle (suspended), active with auto-suspend off,
  // and init (created last, below: its start is still running since the clock stops then).
  const created = await sim.createProject({
    plan: "paid",
    branches: 3,
    availability_checks: false,
  });
  statesProject = created.project.id;
  const [main, second, third] = created.branches;
  await sim.advance(10);
  const endpoints = (
    await t.api<{ endpoints: { id: string }[] }>("GET", `/projects/${statesProject}/endpoints`)
  ).body.endpoints;
  const create = async (branch: string, body: Record<string, unknown>) => {
    const answer = await t!.api("POST", `/projects/${statesProject}/endpoints`, {
      body: { endpoint: { branch_id: branch, ...body } },
    });
    expect(answer.status, answer.text).toBe(201);
  };
  await create(second!.id, { type: "read_only", suspend_timeout_seconds: -1 });
  const suspended = await t.api(
    "POST",
    `/projects/${statesProject}/endpoints/${endpoints[0]!.id}/suspend`,
  );
  expect(suspended.status, suspended.text).toBe(200);
  // The real API's `cancelling`, which the simulator does not use itself: an unknown status.
  await sim.scriptOperation({
    project_id: statesProject,
    branch_id: main!.id,
    action: "apply_storage_config",
    steps: runsThen("cancelling", 1),
  });
  await sim.advance(10);
  // Seen running by the exporter's first poll, then failed: a retry (a backfill counts none).
  await sim.scriptOperation({
    project_id: statesProject,
    branch_id: main!.id,
    action: "apply_config",
    steps: [
      { status: "running", after_seconds: 0 },
      { status: "failed", after_seconds: 3, error: "pageserver unreachable" },
      { status: "running", after_seconds: 13 },
    ],
  });

  // Faults that give the API families series: two 503s, one 429 that pauses the limiter.
  await addApiFaults(t, 2);

  // One traffic project's state file is corrupt: it is reported blocked.
  const projects = await t.api<{ projects: { id: string }[] }>("GET", "/projects?limit=400");
  blockedProject = projects.body.projects[0]!.id;
  state = await tempDir("pgcp-e2e-promtool-");
  await writeFile(path.join(state.dir, `${blockedProject}.state.json`), "{ not json");

  exporter = await startTestExporter(t, {
    projects: "all",
    state: { dir: state.dir },
    poll: { interval: 1, fastInterval: 1, endpointsInterval: 1, backfill: "3h" },
    stuck: { default: 300, actions: { start_compute: 30 } },
    // Every family: the check covers all of them.
    metrics: { detail: "full", perProjectHistograms: true },
  });
  await waitFor("the first poll of every project", async () =>
    samplesNamed(await scrape(exporter!.url), "pgcp_project_up").filter((s) => s.value === 1)
      .length === TRAFFIC_PROJECTS
      ? true
      : undefined,
  );
  await sim.advance(5);
  // The clock does not move again: this endpoint stays in init.
  await create(third!.id, {
    type: "read_write",
    autoscaling_limit_min_cu: 1,
    autoscaling_limit_max_cu: 4,
  });
  rendering = await waitFor(
    "the exporter to poll and list every project",
    async () => {
      const text = await scrape(exporter!.url);
      return complete(text) ? text : undefined;
    },
    { timeoutMs: 25_000, intervalMs: 200 },
  );
}, 60_000);

afterAll(async () => {
  await exporter?.stop();
  await t?.close();
  await state?.remove();
});

describe("promtool check metrics on the live /metrics", () => {
  it("accepts it without a finding", (ctx) => {
    const promtool = requireBinary("promtool", (note) => ctx.skip(note));
    // What the check is run on: traffic counted, endpoints in every state, a blocked project.
    expect(samplesNamed(rendering, "pgcp_operations_total").length).toBeGreaterThan(10);
    expect(
      samplesNamed(rendering, "pgcp_endpoint_auto_suspend_delay_seconds").some(
        (s) => s.value === Infinity,
      ),
    ).toBe(true);
    expect(samplesNamed(rendering, "pgcp_project_blocked")[0]?.labels).toEqual({
      project: blockedProject,
      problem: "corrupt",
    });

    const run = spawnSync(promtool, ["check", "metrics"], { input: rendering, encoding: "utf8" });
    if (run.error !== undefined) throw run.error;
    expect(`${run.stdout}${run.stderr}`).toBe("");
    expect(run.status).toBe(0);
  });
});
