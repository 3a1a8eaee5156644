/**
 * End to end: every query of every panel of the shipped dashboards, run by a real Prometheus
 * (Debian's `prometheus` package: fails under CI when missing, skipped elsewhere) against the
 * exporter, returns data.
 *
 * The history is one that gives every family the dashboards query a series: the simulator's
 * traffic (failures, retries, cancellations, slow operations, cold starts and auto-suspends) on
 * six projects, counted by a backfill and then live while Prometheus scrapes every second; one
 * project whose state file is corrupt (blocked); an operation that never ends (stuck: the
 * simulated clock runs two hours behind the exporter's); injected 503s (API retries) and a 429
 * (a rate-limiter pause); a request budget small enough that the scheduler stretches its
 * intervals and requests queue at the limiter; and three alert sinks on a local receiver, one
 * that acknowledges, one that fails (pending alerts, a full outbox, dropped alerts) and one that
 * refuses for good (dead letters).
 *
 * Grafana's variables are replaced: `$project` by `.*` (what "All" sends), `$__rate_interval`,
 * `$__interval` by `1m`, `$__range` by `1h`.
 *
 * The same data also runs the expressions of the alerting rules (config/prometheus/alerts.yml),
 * whose unit tests (test/rules) use hand-written series: here they meet the real ones.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startReceiver, type Receiver } from "../support/receiver.js";
import type { TestSimulator } from "../support/simulator.js";
import { addApiFaults, startTrafficSimulator } from "../e2e/support/traffic-simulator.js";
import { findBinary, requireBinary } from "../e2e/support/binaries.js";
import {
  scrape,
  startTestExporter,
  tempDir,
  waitFor,
  type TestExporter,
} from "../e2e/support/exporter.js";
import { startPrometheus, type RunningPrometheus, type Series } from "../e2e/support/prometheus.js";
import { COMPUTE_PANELS, PROJECT_VARIABLE_QUERY } from "../../tools/dashboards/index.js";
import { loadDashboards, panelQueries, substitute, type PanelQuery } from "./support/dashboards.js";
import { RULES_JOB, loadAlertRules } from "../rules/support.js";

const TRAFFIC_PROJECTS = 6;
const JOB = "pgcp";
const SUBSTITUTIONS = { rateInterval: "1m", interval: "1m", range: "1h" };
/**
 * Every query but those of the compute probe's panels, which have data only with computes on a
 * real PostgreSQL: test/pg/compute-probe.test.ts runs those.
 */
const QUERIES: PanelQuery[] = loadDashboards()
  .flatMap(({ json }) => panelQueries(json))
  .filter((q) => !(COMPUTE_PANELS as readonly string[]).includes(q.panel));
const name = (q: PanelQuery) => `${q.dashboard} / ${q.panel} / ${q.refId}`;

const prometheusBinary = findBinary("prometheus");

let t: TestSimulator | undefined;
let receiver: Receiver | undefined;
let exporter: TestExporter | undefined;
let prometheus: RunningPrometheus | undefined;
let state: { dir: string; remove(): Promise<void> } | undefined;
/** The answers to the last round of queries, by query. */
let answers = new Map<PanelQuery, Series[]>();

/** The sinks and how the receiver answers each (by the first path segment). */
const SINKS = {
  ok: { status: 200, body: "ok" },
  flaky: { status: 500, body: "try again" },
  refusing: { status: 400, body: "no" },
} as const;

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms);
  });

/** Data: at least one series, and one whose value is a number (a quantile of nothing is NaN). */
function hasData(series: readonly Series[]): boolean {
  return series.some((s) => s.value !== undefined && s.value[1] !== "NaN");
}

/** Runs every query once; the ones that returned no data. */
async function queriesWithoutData(): Promise<PanelQuery[]> {
  const next = new Map<PanelQuery, Series[]>();
  for (const q of QUERIES) {
    next.set(q, await prometheus!.query(substitute(q.expr, SUBSTITUTIONS)));
  }
  answers = next;
  return QUERIES.filter((q) => !hasData(next.get(q) ?? []));
}

beforeAll(async () => {
  if (prometheusBinary === undefined) return;
  receiver = await startReceiver({
    fallback: (request) => {
      const sink = request.path.split("/")[1] ?? "";
      return sink in SINKS ? SINKS[sink as keyof typeof SINKS] : { status: 404 };
    },
  });
  // An hour of history for the backfill: endpoints created, started, suspended.
  t = await startTrafficSimulator({
    projects: TRAFFIC_PROJECTS,
    operationsPerMinute: 30,
    failureShare: 0.2,
  });
  const { sim } = t;

  const projects = (await t.api<{ projects: { id: string }[] }>("GET", "/projects?limit=400")).body
    .projects;
  expect(projects).toHaveLength(TRAFFIC_PROJECTS);
  const [blocked, stuck] = projects;
  const endpoints = await t.api<{ endpoints: { id: string; branch_id: string }[] }>(
    "GET",
    `/projects/${stuck!.id}/endpoints`,
  );
  const branchId = endpoints.body.endpoints[0]?.branch_id;
  expect(branchId, "the branch of the stuck project's endpoint").toBeDefined();
  // Never ends within the test: open, and stuck from the first poll on.
  await sim.scriptOperation({
    project_id: stuck!.id,
    branch_id: branchId!,
    action: "apply_storage_config",
    steps: [
      { status: "running", after_seconds: 0 },
      { status: "finished", after_seconds: 30 * 86_400 },
    ],
  });
  // API retries (503s) and a pause of the shared limiter (a 429).
  await addApiFaults(t, 3);

  state = await tempDir("pgcp-dashboards-e2e-");
  await writeFile(path.join(state.dir, `${blocked!.id}.state.json`), "{ not json");
  const env: NodeJS.ProcessEnv = {};
  for (const sink of Object.keys(SINKS)) {
    env[`PGCP_E2E_${sink.toUpperCase()}_URL`] = `${receiver.url}/${sink}/hook`;
  }
  exporter = await startTestExporter(
    t,
    {
      projects: "all",
      state: { dir: state.dir },
      // A budget below what polling every project every second needs: intervals stretch and
      // requests queue at the limiter.
      api: { requestsPerMinute: 300, burstPerSecond: 3, maxAttempts: 3 },
      poll: { interval: 1, fastInterval: 1, endpointsInterval: 1, backfill: "2h" },
      stuck: { default: 300, actions: { start_compute: 30 } },
      alerts: { outboxLimit: 5 },
      // The default level, stated: the dashboards and the alert rules must work with it.
      metrics: { detail: "standard" },
      sinks: Object.keys(SINKS).map((sink) => ({
        name: sink,
        kind: "webhook",
        urlEnv: `PGCP_E2E_${sink.toUpperCase()}_URL`,
        groupWindow: 0,
        timeout: 2,
      })),
    },
    env,
  );
  await waitFor("the exporter's first polls", async () =>
    (await scrape(exporter!.url)).includes("pgcp_project_up{") ? true : undefined,
  );
  prometheus = await startPrometheus(prometheusBinary, {
    targets: [`127.0.0.1:${exporter.port}`],
    job: JOB,
    scrapeIntervalSeconds: 1,
  });

  // Live traffic while Prometheus scrapes, until every query has an answer.
  let empty: PanelQuery[] = QUERIES;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    await sim.advance(20);
    await sleep(500);
    empty = await queriesWithoutData();
    if (empty.length === 0) break;
  }
  if (empty.length > 0) {
    console.error(
      `still without data: ${empty.map(name).join("; ")}\nexporter logs:\n${exporter.logs.slice(-20).join("\n")}`,
    );
  }
}, 60_000);

afterAll(async () => {
  await prometheus?.stop();
  await exporter?.stop();
  await receiver?.close();
  await t?.close();
  await state?.remove();
});

describe("the dashboards' queries through Prometheus", () => {
  it("the $project variable lists the watched projects", async (ctx) => {
    requireBinary("prometheus", (note) => ctx.skip(note));
    const [, metric, label] = /^label_values\((\w+), (\w+)\)$/.exec(PROJECT_VARIABLE_QUERY)!;
    const response = await fetch(
      `${prometheus!.url}/api/v1/label/${label!}/values?${new URLSearchParams({ "match[]": metric! }).toString()}`,
    );
    const body = (await response.json()) as { status: string; data: string[] };
    expect(body.status).toBe("success");
    expect(body.data).toHaveLength(TRAFFIC_PROJECTS);
  });

  it.for(QUERIES.map((q) => [name(q), q] as const))("%s returns data", ([, q], ctx) => {
    requireBinary("prometheus", (note) => ctx.skip(note));
    const series = answers.get(q) ?? [];
    const expr = substitute(q.expr, SUBSTITUTIONS);
    expect(series.length, expr).toBeGreaterThan(0);
    expect(hasData(series), `${expr} answered only NaN`).toBe(true);
  });
});

/**
 * The alerting rules' expressions (without their `for`) on the same data: they all run and
 * give alerts the labels their annotations use; those whose condition the history creates for
 * sure (a stuck operation, a blocked project, failures, stretched intervals) return alerts.
 */
describe("the alert rules' expressions on the same data", () => {
  const RULES = loadAlertRules();
  /** Each alert's labels besides job and instance (Prometheus drops `__name__` from alerts). */
  const LABELS: Record<string, readonly string[]> = {
    PgcpOperationsFailing: ["project", "action"],
    PgcpOperationFailureRatioHigh: ["project", "action"],
    PgcpOperationsStuck: ["project", "action"],
    PgcpExporterDown: [],
    PgcpConfigReloadFailed: [],
    PgcpAccountKeyRefused: ["account"],
    PgcpProjectPollFailing: ["project"],
    PgcpProjectStale: ["project"],
    PgcpProjectBlocked: ["project", "problem"],
    PgcpApiErrors: [],
    PgcpApiRateLimited: [],
    PgcpPollIntervalsStretched: [],
    PgcpAlertBacklog: ["sink"],
    PgcpAlertsDeadLettered: ["sink", "reason"],
    PgcpAlertsDropped: ["project"],
    PgcpLargerComputeAdvised: ["project", "endpoint", "reason"],
    PgcpComputeProbeFailing: ["project", "endpoint"],
  };
  const HOLDING = new Set([
    "PgcpOperationsFailing",
    "PgcpOperationsStuck",
    "PgcpProjectBlocked",
    "PgcpPollIntervalsStretched",
  ]);

  it("knows the labels of every alert", () => {
    expect(Object.keys(LABELS).sort()).toEqual(RULES.map((r) => r.alert).sort());
  });

  it.for(RULES.map((r) => [r.alert, r] as const))("%s runs", async ([alert, rule], ctx) => {
    requireBinary("prometheus", (note) => ctx.skip(note));
    // Prometheus scrapes the exporter under the job JOB here.
    const expr = rule.expr.replaceAll(`job="${RULES_JOB}"`, `job="${JOB}"`);
    const alerts = await prometheus!.query(expr);
    if (HOLDING.has(alert)) expect(alerts.length, `${alert} does not hold`).toBeGreaterThan(0);
    if (alert === "PgcpExporterDown") expect(alerts).toEqual([]);
    for (const a of alerts) {
      const names = Object.keys(a.metric).filter((l) => l !== "__name__");
      expect(names.sort()).toEqual(["instance", "job", ...(LABELS[alert] ?? [])].sort());
      expect(a.metric.job).toBe(JOB);
    }
  });
});
