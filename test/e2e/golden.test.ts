/**
 * Golden exposition test: a scripted simulator history, polled by the real exporter
 * (`startExporter`: daemon, metrics and HTTP server in-process) at each detail level (three
 * exporters, each with its own state, polled one after the other at every step), and every
 * metric family of each one's `/metrics`, fetched over HTTP, compared with
 * `test/metrics/golden/e2e-history.<level>.prom` as sorted, whitespace-normalised sample lines.
 * `UPDATE_GOLDEN=1` rewrites the files; review the diff against the expectations written out
 * below before committing them.
 *
 * Determinism: the simulator's clock is manual and the test polls (`daemon.pollAll()`) and
 * lists endpoints itself after each clock step; the scheduler is stopped at once so that no
 * poll of its own interleaves. What still varies between runs is listed in VOLATILE.
 *
 * The history (t = simulated seconds since the simulator's start S0; P = poll, L = listing):
 *
 *   t=0    project (paid, 2 branches): create_timeline O1 (running, finished t=2),
 *          start_compute O2 of the read-write endpoint RW (scheduling, running t=2, finished
 *          t=4), create_branch O3 on branch 2 (running, finished t=1).
 *          P1: the first start counts nothing and follows O1, O2, O3 (open). L1.
 *   t=5    read-only endpoint RO on branch 2 (0.5-2 CU, auto-suspend off): start_compute B1
 *          (running, finished t=7). Scripted:
 *            S1 apply_config on RW: running, failed t=8 (3 s), running t=18, finished t=25 (20 s)
 *            S2 apply_storage_config: running, failed t=9 (4 s), never retried
 *            S3 create_branch on branch 2: running, error t=11 (6 s)
 *            S4 apply_storage_config on branch 2: running, cancellation_pending t=7,
 *               cancelled t=9 (4 s)
 *          P2: O1 finished (2 s), O2 finished (4 s), O3 finished (1 s).
 *   t=10   P3: B1 finished (2 s), S1 failed (3 s), S2 failed (4 s), S4 cancelled (4 s).
 *   t=15   one 503 on listOperations, then P4 (retried once): S3 error (6 s).
 *   t=30   P5: S1 finished (20 s). Then RW suspended (suspend_compute 1 s, finished t=31)
 *          and RO started while active (start_compute skipped at once, 0 s).
 *   t=35   RW suspended while idle (suspend_compute skipped, 0 s); a connection to RW starts
 *          it (start_compute, finished t=37, 2 s). P6.
 *   t=40   S5 start_compute on RO: running, never ends (the stuck one). P7.
 *   t=45   RW suspended (suspend_compute, finished t=46, 1 s).
 *   t=110  P8.
 *   t=115  S6 apply_config on RW: scheduling, never ends; S7 apply_storage_config:
 *          running, cancellation_pending t=116, never ends.
 *   t=120  P9, L2.
 *
 * Stuck detection compares creation times (simulated) with the daemon's wall clock, so S0 is
 * set to WALL_LEAD_SECONDS + 120 s before the wall-clock start of the test: at P9 the wall
 * clock is S0 + 130 s + the test's own run time (a few seconds). Thresholds: start_compute 30 s,
 * others 60 s. S5 (created t=40) is then open for 90 s and more: stuck. S6 and S7 (created
 * t=115) are open for 15 s plus the run time: not stuck, unless the test took over 45 s.
 * Operations open at earlier polls are flagged stuck at those polls too, which no family shows
 * once they have ended.
 *
 * How the golden numbers follow from the history, family by family:
 * - pgcp_operations_total (14 arrivals; also checked against the simulator's truth below):
 *   create_timeline finished 1 (O1); create_branch finished 1 (O3), error 1 (S3); start_compute
 *   finished 3 (O2, B1, the connection's start at t=35), skipped 1 (RO started while active);
 *   suspend_compute finished 2 (t=31, t=46), skipped 1 (t=35); apply_config failed 1 and
 *   finished 1 (S1: one failure, retried, finished); apply_storage_config failed 1 (S2),
 *   cancelled 1 (S4). Nothing had ended at P1, so the first start's baseline drops nothing.
 * - pgcp_operation_duration_seconds and pgcp_project_operation_duration_seconds (one project:
 *   the same series with a project label), from creation to the end status: skipped 0 s
 *   (le=0.1); create_branch finished 1 s and suspend_compute 1 s + 1 s (le=1); create_timeline
 *   2 s (le=2.5); start_compute 4 s (O2 waited for the timeline) + 2 s + 2 s, sum 8, two in
 *   le=2.5 and all three in le=5; apply_config failed 3 s, apply_storage_config failed 4 s and
 *   cancelled 4 s (le=5); create_branch error 6 s (le=10); apply_config finished 20 s (le=30).
 * - pgcp_operations_open: S5 start_compute running, S6 apply_config scheduling, S7
 *   apply_storage_config cancellation_pending. S2, failed and watched for a retry, is not open.
 * - pgcp_operation_retries_total, failures the service moved on from: apply_config 1 (S1,
 *   failed, then retried and finished). S2 (failed, never retried) and S3 (error, final) are
 *   failures the operations still sit in, not retries.
 * - pgcp_operations_stuck: start_compute 1 (S5). S2 was flagged stuck while it ran (at P2) but
 *   has failed since: no longer open, so no longer stuck.
 * - pgcp_project_newest_operation_timestamp_seconds: S0+115, the creation of S6 and S7.
 * - Endpoint families (L2): RW read_write on br-main, idle (suspended at t=46), 0.25-0.25 CU
 *   (the simulator's default size), 112 connections, auto-suspend 300 s (0 = the default),
 *   last active S0+37 (started by the connection); RO read_only on br-2, active since t=7,
 *   0.5-2 CU, 225 connections, auto-suspend off (+Inf, enabled 0), last active S0+7 (starting
 *   it again at t=30 was skipped and changed nothing). Starts: RW 2 (O2, t=37), RO 1 (B1; S5
 *   has not finished). Suspends: RW 2 (t=31, t=46), RO 0 (listed, never suspended).
 * - pgcp_project_up 1, pgcp_project_catching_up 0, no pgcp_project_blocked series.
 * - pgcp_poll_duration_seconds (count) and pgcp_state_commits_total: 9 successes, P1 to P9 (the
 *   503 was repeated inside P4). pgcp_endpoint_listings_total: 2 successes, L1 and L2.
 *   pgcp_discovery_failures_total 0: a fixed project list, nothing discovered.
 * - pgcp_scheduler_poll_interval_seconds 2592000 (30 d) in both lanes, stretch ratio 1.
 * - pgcp_api_requests_total: listOperations 200 x9, one per poll (16 records: the first page of
 *   50 holds the whole log, so no poll reads a second page or an operation by id), 503 x1 (the
 *   fault); listEndpoints 200 x2. pgcp_api_request_duration_seconds counts the same attempts;
 *   pgcp_api_retries_total: listOperations http_503 1. No 429, and 12 requests stay far within
 *   the limiter's burst: no rate-limit wait or pause series.
 * - Alert families (pgcp_alert*): no alert sink is configured, so none has a series.
 * - At standard, pgcp_endpoint_info carries the sizes above as labels, and
 *   pgcp_endpoint_current_state is RW idle and RO active; per project, starts 3 and suspends 2
 *   (the sums of the endpoints' counters), min CU 0.75 and max CU 2.25. At minimal, no endpoint
 *   family but the listing counter, and neither the retries nor the catching-up flag.
 */
import { readFile, writeFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CATALOGUE, DETAIL_LEVELS, atLevel, type DetailLevel } from "../../src/metrics/index.js";
import { PACKAGE, REVISION } from "../../src/version.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { truthArrivals } from "../sync/support.js";
import {
  parseSamples,
  scrape,
  startTestExporter,
  tempDir,
  type Sample,
  type TestExporter,
} from "./support/exporter.js";

const goldenFile = (level: DetailLevel) =>
  fileURLToPath(new URL(`../metrics/golden/e2e-history.${level}.prom`, import.meta.url));
const UPDATE = process.env.UPDATE_GOLDEN === "1";

/** Simulated length of the history, and how far the wall clock is ahead of its end. */
const HISTORY_SECONDS = 120;
const WALL_LEAD_SECONDS = 10;

/** Poll and listing intervals long enough that the scheduler would never act in a test. */
const NEVER = "30d";

/**
 * Everything in `/metrics` that varies between runs of the same history, and what the
 * comparison does with it. Every other value is compared exactly.
 */
const VOLATILE = {
  /** prom-client's process_* and nodejs_* families: left out of the comparison entirely. */
  excludedPrefixes: ["process_", "nodejs_"],
  /** Values replaced by a placeholder (checked separately where they can be). */
  values: {
    // Wall-clock time of the latest commit (checked to lie within the test's run).
    pgcp_project_last_success_timestamp_seconds: "<wall-clock>",
    // Wall-clock time of the configuration's last successful load (the start here).
    pgcp_config_last_reload_success_timestamp_seconds: "<wall-clock>",
    // Tokens of the API client's limiter: refilled by wall time between requests.
    pgcp_api_rate_limit_tokens: "<tokens>",
    // Time queued at the limiter: wall time.
    pgcp_api_rate_limit_wait_seconds_total: "<seconds>",
  } as Record<string, string>,
  /** Simulated timestamps: written as `S0+<seconds>`, S0 being the simulator's start. */
  simulatedTimestamps: [
    "pgcp_project_newest_operation_timestamp_seconds",
    "pgcp_endpoint_last_active_timestamp_seconds",
  ],
  /** Durations measured on the wall clock: only `_count` and the `+Inf` bucket are kept. */
  wallClockHistograms: ["pgcp_poll_duration_seconds", "pgcp_api_request_duration_seconds"],
  /** Labels replaced by a placeholder. */
  labels: { pgcp_build_info: { node_version: "<node>", revision: "<revision>" } } as Record<
    string,
    Record<string, string>
  >,
  // Resource ids are seeded (the same every run) but are written as names to keep the file
  // readable: <project>, <br-main>, <br-2>, <ep-rw>, <ep-ro> (also inside host names).
};

interface Ids {
  readonly project: string;
  readonly brMain: string;
  readonly br2: string;
  readonly epRw: string;
  readonly epRo: string;
}

let t: TestSimulator | undefined;
const exporters = new Map<DetailLevel, TestExporter>();
const states: { remove(): Promise<void> }[] = [];
let ids: Ids;
let s0: number;
let wallStartS: number;
/** Each level's rendering; `rendering` is the full one. */
const renderings = new Map<DetailLevel, string>();
let rendering: string;
let arrivalsFromTruth: Record<string, number>;

beforeAll(async () => {
  wallStartS = Math.floor(Date.now() / 1000);
  s0 = wallStartS - HISTORY_SECONDS - WALL_LEAD_SECONDS;
  const simulator = await startTestSimulator({ startTime: new Date(s0 * 1000) });
  t = simulator;
  const { sim } = simulator;

  // t=0
  const created = await sim.createProject({
    plan: "paid",
    branches: 2,
    availability_checks: false,
  });
  const project = created.project.id;
  const brMain = created.branches[0]!.id;
  const br2 = created.branches[1]!.id;
  const listed = await simulator.api<{ endpoints: { id: string }[] }>(
    "GET",
    `/projects/${project}/endpoints`,
  );
  const epRw = listed.body.endpoints[0]!.id;

  for (const detail of DETAIL_LEVELS) {
    const dir = await tempDir("pgcp-e2e-golden-");
    states.push(dir);
    const exporter = await startTestExporter(simulator, {
      projects: [project],
      state: { dir: dir.dir },
      poll: { interval: NEVER, fastInterval: NEVER, endpointsInterval: NEVER },
      stuck: { default: 60, actions: { start_compute: 30 } },
      metrics: { detail, perProjectHistograms: true },
    });
    exporters.set(detail, exporter);
    // The test drives every poll and listing; the scheduler must not add its own.
    for (const account of exporter.exporter.daemon.accounts) await account.scheduler.stop();
  }
  const daemons = [...exporters.values()].map((e) => e.exporter.daemon);
  /** The single-key settings make one account: its scheduler's jobs are the daemon's. */
  const schedulerOf = (daemon: (typeof daemons)[number]) => {
    const [account] = daemon.accounts;
    if (account === undefined) throw new Error("the single-key settings make one account");
    return account.scheduler;
  };
  /** Each exporter polls in turn; `before` runs before each one's poll (a fault for each). */
  const poll = async (before?: () => Promise<unknown>) => {
    for (const daemon of daemons) {
      await before?.();
      await daemon.pollAll();
    }
  };
  // The daemon's own listing job (what the scheduler runs when a listing is due).
  const list = async () => {
    for (const daemon of daemons) {
      await schedulerOf(daemon)["jobs"].listEndpoints(project, new AbortController().signal);
    }
  };
  const endpointCall = async (endpoint: string, call: "start" | "suspend") => {
    const answer = await simulator.api(
      "POST",
      `/projects/${project}/endpoints/${endpoint}/${call}`,
    );
    expect(answer.status, answer.text).toBe(200);
  };
  const script = (request: Omit<Parameters<typeof sim.scriptOperation>[0], "project_id">) =>
    sim.scriptOperation({ project_id: project, ...request });

  await poll(); // P1
  await list(); // L1

  // t=5
  await sim.advance(5);
  const ro = await simulator.api<{ endpoint: { id: string } }>(
    "POST",
    `/projects/${project}/endpoints`,
    {
      body: {
        endpoint: {
          branch_id: br2,
          type: "read_only",
          autoscaling_limit_min_cu: 0.5,
          autoscaling_limit_max_cu: 2,
          suspend_timeout_seconds: -1,
        },
      },
    },
  );
  expect(ro.status, ro.text).toBe(201);
  const epRo = ro.body.endpoint.id;
  ids = { project, brMain, br2, epRw, epRo };
  await script({
    branch_id: brMain,
    endpoint_id: epRw,
    action: "apply_config",
    steps: [
      { status: "running", after_seconds: 0 },
      { status: "failed", after_seconds: 3, error: "pageserver unreachable" },
      { status: "running", after_seconds: 13 },
      { status: "finished", after_seconds: 20 },
    ],
  });
  await script({
    branch_id: brMain,
    action: "apply_storage_config",
    steps: [
      { status: "running", after_seconds: 0 },
      { status: "failed", after_seconds: 4, error: "disk quota exceeded" },
    ],
  });
  await script({
    branch_id: br2,
    action: "create_branch",
    steps: [
      { status: "running", after_seconds: 0 },
      { status: "error", after_seconds: 6, error: "parent timeline not found" },
    ],
  });
  await script({
    branch_id: br2,
    action: "apply_storage_config",
    steps: [
      { status: "running", after_seconds: 0 },
      { status: "cancellation_pending", after_seconds: 2 },
      { status: "cancelled", after_seconds: 4 },
    ],
  });
  await poll(); // P2

  // t=10
  await sim.advance(5);
  await poll(); // P3

  // t=15
  await sim.advance(5);
  // P4, its first request answered 503 and repeated
  await poll(() =>
    sim.addFault({ route: "listOperations", kind: "status", status: 503, count: 1 }),
  );

  // t=30
  await sim.advance(15);
  await poll(); // P5
  await endpointCall(epRw, "suspend");
  await endpointCall(epRo, "start");

  // t=35
  await sim.advance(5);
  await endpointCall(epRw, "suspend");
  await sim.connect(epRw);
  await poll(); // P6

  // t=40
  await sim.advance(5);
  await script({
    branch_id: br2,
    endpoint_id: epRo,
    action: "start_compute",
    steps: [{ status: "running", after_seconds: 0 }],
  });
  await poll(); // P7

  // t=45
  await sim.advance(5);
  await endpointCall(epRw, "suspend");

  // t=110
  await sim.advance(65);
  await poll(); // P8

  // t=115
  await sim.advance(5);
  await script({
    branch_id: brMain,
    endpoint_id: epRw,
    action: "apply_config",
    steps: [{ status: "scheduling", after_seconds: 0 }],
  });
  await script({
    branch_id: brMain,
    action: "apply_storage_config",
    steps: [
      { status: "running", after_seconds: 0 },
      { status: "cancellation_pending", after_seconds: 1 },
    ],
  });

  // t=120
  await sim.advance(5);
  await poll(); // P9
  await list(); // L2

  for (const [detail, exporter] of exporters) {
    await exporter.exporter.metrics.refresh();
    renderings.set(detail, await scrape(exporter.url));
  }
  rendering = renderings.get("full")!;
  arrivalsFromTruth = await truthArrivals(simulator, project, new Date(s0 * 1000).toISOString());
});

afterAll(async () => {
  for (const exporter of exporters.values()) await exporter.stop();
  await t?.close();
  for (const dir of states) await dir.remove();
});

/** `name{labels} value` with ids, volatile values and labels normalised; undefined: dropped. */
function normalise(sample: Sample, family: string): string | undefined {
  if (VOLATILE.wallClockHistograms.includes(family)) {
    if (sample.name.endsWith("_sum")) return undefined;
    if (sample.name.endsWith("_bucket") && sample.labels.le !== "+Inf") return undefined;
  }
  const replaced = VOLATILE.labels[family] ?? {};
  const labels = Object.entries(sample.labels).map(([name, value]) => {
    const shown = replaced[name] ?? named(value);
    return `${name}="${shown}"`;
  });
  let value: string;
  if (VOLATILE.values[family] !== undefined) value = VOLATILE.values[family];
  else if (VOLATILE.simulatedTimestamps.includes(family)) value = `S0+${sample.value - s0}`;
  else value = formatValue(sample.value);
  return `${sample.name}${labels.length > 0 ? `{${labels.join(",")}}` : ""} ${value}`;
}

function named(value: string): string {
  const names: [string, string][] = [
    [ids.project, "<project>"],
    [ids.brMain, "<br-main>"],
    [ids.br2, "<br-2>"],
    [ids.epRw, "<ep-rw>"],
    [ids.epRo, "<ep-ro>"],
  ];
  return names.reduce((v, [id, name]) => v.split(id).join(name), value);
}

function formatValue(value: number): string {
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

/** The family a sample belongs to (histogram suffixes stripped when that names a family). */
function familyOf(name: string, families: ReadonlySet<string>): string {
  if (families.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count)$/, "");
  return families.has(base) ? base : name;
}

/** The rendering as golden sections: `# <family> <type>` then its sorted sample lines. */
function sections(text: string): Map<string, string[]> {
  const types = new Map<string, string>();
  for (const line of text.split("\n")) {
    const m = /^# TYPE (\S+) (\S+)$/.exec(line.trim());
    if (m !== null) types.set(m[1]!, m[2]!);
  }
  const families = new Set(types.keys());
  const out = new Map<string, string[]>();
  for (const [name, type] of types) {
    if (VOLATILE.excludedPrefixes.some((p) => name.startsWith(p))) continue;
    out.set(name, [`# ${name} ${type}`]);
  }
  for (const sample of parseSamples(text)) {
    const family = familyOf(sample.name, families);
    const lines = out.get(family);
    if (lines === undefined) {
      if (VOLATILE.excludedPrefixes.some((p) => family.startsWith(p))) continue;
      throw new Error(`sample of no family: ${sample.name}`);
    }
    const line = normalise(sample, family);
    if (line !== undefined) lines.push(line);
  }
  for (const [name, lines] of out) {
    const [header, ...rest] = lines;
    out.set(name, [header!, ...rest.sort()]);
  }
  return out;
}

function formatGolden(parsed: Map<string, string[]>): string {
  const order = CATALOGUE.map((spec) => spec.name as string);
  const names = [...parsed.keys()].sort((a, b) => order.indexOf(a) - order.indexOf(b));
  return names.map((name) => `${parsed.get(name)!.join("\n")}\n`).join("\n");
}

function parseGolden(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const block of text.split(/\n\s*\n/)) {
    const lines = block
      .split("\n")
      .map((line) => line.trim().replace(/\s+/g, " "))
      .filter((line) => line !== "");
    const header = lines[0];
    if (header === undefined) continue;
    const name = /^# (\S+) \S+$/.exec(header)?.[1];
    if (name === undefined) throw new Error(`golden block without a header: ${header}`);
    out.set(name, [header, ...lines.slice(1).sort()]);
  }
  return out;
}

describe("golden /metrics of a scripted history", () => {
  it.each(DETAIL_LEVELS)(
    "matches the golden file at %s detail, family by family",
    async (level) => {
      const actual = sections(renderings.get(level)!);
      const file = goldenFile(level);
      if (UPDATE) {
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(file, formatGolden(actual));
      }
      const golden = parseGolden(await readFile(file, "utf8"));
      // Every catalogue family of the level is served (the opt-in one is on), and nothing else
      // but process ones.
      expect([...actual.keys()].sort()).toEqual(
        CATALOGUE.filter((s) => atLevel(s, level))
          .map((s) => s.name as string)
          .sort(),
      );
      expect([...golden.keys()].sort()).toEqual([...actual.keys()].sort());
      for (const [name, lines] of actual) {
        expect.soft(lines, `${name} (UPDATE_GOLDEN=1 rewrites the file)`).toEqual(golden.get(name));
      }
    },
  );

  it("counts exactly the simulator's arrivals", () => {
    const counted: Record<string, number> = {};
    for (const s of parseSamples(rendering)) {
      if (s.name !== "pgcp_operations_total") continue;
      counted[`${s.labels.action ?? ""} ${s.labels.status ?? ""}`] = s.value;
    }
    expect(counted).toEqual(arrivalsFromTruth);
  });

  it("stamps the last success with the wall clock of the test's run", () => {
    const stamps = parseSamples(rendering).filter(
      (s) => s.name === "pgcp_project_last_success_timestamp_seconds",
    );
    expect(stamps).toHaveLength(1);
    expect(stamps[0]!.value).toBeGreaterThanOrEqual(wallStartS);
    expect(stamps[0]!.value).toBeLessThanOrEqual(Date.now() / 1000);
  });

  it("reports the exporter's version", () => {
    const info = parseSamples(rendering).find((s) => s.name === "pgcp_build_info");
    expect(info?.labels).toEqual({
      version: PACKAGE.version,
      revision: REVISION ?? "",
      node_version: process.versions.node,
    });
  });
});
