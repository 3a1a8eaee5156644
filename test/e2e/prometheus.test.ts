/**
 * End to end through a real Prometheus server (Debian's `prometheus` package): the exporter
 * (in-process, polling on its own every second) watches a simulator that plays a scripted
 * history; Prometheus scrapes it every second on loopback; the counts come back through
 * Prometheus' HTTP API exactly, also across a restart of the exporter on the same port and
 * state directory.
 *
 * Exactness of `increase()`: Prometheus extrapolates `increase(x[r])` from the first and last
 * samples in the range to the range's ends, unless a sample lies on the end (the distance is
 * 0) or the first sample is 0. So the query is evaluated at the timestamp `tB` of the last
 * scrape, over exactly `tB - tA` milliseconds, `tA` being the first scrape, and every series
 * it sums exists from that first scrape on (a "pre-history" ends one operation of each kind
 * before Prometheus starts): the first and last samples are then the range's ends, the
 * extrapolation factor is exactly 1, and `increase` is `last - first`, the history's count.
 * This relies on range selectors including their start (Prometheus 2.x, as Debian ships;
 * 3.x made them left-open, which the test would report as a missing first sample). A series
 * that appeared mid-range would be extrapolated, which is why the history adds no new kinds.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isEndStatus } from "../../src/contract/index.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { micros } from "../sync/support.js";
import { findBinary, requireBinary } from "./support/binaries.js";
import {
  parseSamples,
  scrape,
  startTestExporter,
  tempDir,
  waitFor,
  type TestExporter,
} from "./support/exporter.js";
import { startPrometheus, type RunningPrometheus, type Series } from "./support/prometheus.js";
import { runsThen } from "../support/operation-steps.js";

const JOB = "pgcp";

type Step = { status: string; after_seconds: number; error?: string };

/** The kinds of operation the history plays, each a status path ending in an end status. */
const KINDS = {
  finished: {
    action: "apply_config",
    steps: runsThen("finished", 2),
  },
  failed: {
    action: "apply_config",
    steps: runsThen("failed", 3, "pageserver unreachable"),
  },
  /** Fails, is retried by the service, finishes: one failed and one finished arrival. */
  retried: {
    action: "apply_config",
    steps: [
      { status: "running", after_seconds: 0 },
      { status: "failed", after_seconds: 2, error: "compute node restarted" },
      { status: "running", after_seconds: 6 },
      { status: "finished", after_seconds: 9 },
    ],
  },
  error: {
    action: "create_branch",
    steps: runsThen("error", 4, "parent timeline not found"),
  },
  cancelled: {
    action: "apply_storage_config",
    steps: [
      { status: "running", after_seconds: 0 },
      { status: "cancellation_pending", after_seconds: 1 },
      { status: "cancelled", after_seconds: 2 },
    ],
  },
  skipped: {
    action: "start_compute",
    steps: [
      { status: "scheduling", after_seconds: 0 },
      { status: "skipped", after_seconds: 1 },
    ],
  },
} satisfies Record<string, { action: string; steps: Step[] }>;

type Kind = keyof typeof KINDS;

/**
 * The scripted phases: how many operations of each kind. Every (action, status) pair the
 * phases produce is produced by the pre-history already (see the file comment).
 *   pre:    apply_config finished 1, failed 1; create_branch error 1; apply_storage_config
 *           cancelled 1; start_compute skipped 1                                   = 5
 *   phase1: apply_config finished 3+1, failed 2+1; create_branch error 1;
 *           apply_storage_config cancelled 2; start_compute skipped 1              = 11
 *   phase2 (after the restart): apply_config finished 2+1, failed 1+1; create_branch error 2;
 *           apply_storage_config cancelled 1; start_compute skipped 3              = 11
 */
const PRE: Partial<Record<Kind, number>> = {
  finished: 1,
  failed: 1,
  error: 1,
  cancelled: 1,
  skipped: 1,
};
const PHASE1: Partial<Record<Kind, number>> = {
  finished: 3,
  failed: 2,
  retried: 1,
  error: 1,
  cancelled: 2,
  skipped: 1,
};
const PHASE2: Partial<Record<Kind, number>> = {
  finished: 2,
  failed: 1,
  retried: 1,
  error: 2,
  cancelled: 1,
  skipped: 3,
};

/** `action status` → arrivals a phase scripts. */
function scripted(phase: Partial<Record<Kind, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [kind, n] of Object.entries(phase) as [Kind, number][]) {
    const { action, steps } = KINDS[kind];
    for (const step of steps as Step[]) {
      if (!isEndStatus(step.status)) continue;
      const key = `${action} ${step.status}`;
      out[key] = (out[key] ?? 0) + n;
    }
  }
  return out;
}

function add(...counts: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of counts) for (const [k, v] of Object.entries(c)) out[k] = (out[k] ?? 0) + v;
  return out;
}

function total(counts: Record<string, number>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

const prometheusBinary = findBinary("prometheus");

let t: TestSimulator | undefined;
let exporter: TestExporter | undefined;
let prometheus: RunningPrometheus | undefined;
let state: { dir: string; remove(): Promise<void> } | undefined;
let project: string;
let branch: string;
/** Simulated time of the exporter's first (baseline) poll: later arrivals are all counted. */
let baselineIso: string;
/** Persisted counts served at once by the restarted exporter, before its first poll. */
let servedAtRestart: Record<string, number>;

/** The exporter's settings; `listen` is added for the restart. */
function settings(): Record<string, unknown> {
  return {
    projects: [project],
    state: { dir: state!.dir },
    poll: { interval: 1, fastInterval: 1, endpointsInterval: 0 },
  };
}

async function play(phase: Partial<Record<Kind, number>>): Promise<void> {
  for (const [kind, n] of Object.entries(phase) as [Kind, number][]) {
    for (let i = 0; i < n; i++) {
      const { action, steps } = KINDS[kind];
      await t!.sim.scriptOperation({ project_id: project, branch_id: branch, action, steps });
    }
  }
  // The clock moves in steps; the exporter polls on its own, whenever it is due.
  for (let i = 0; i < 4; i++) await t!.sim.advance(3);
}

/** `action status` → count of `pgcp_operations_total` in a rendering, for the project. */
function countsIn(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of parseSamples(text)) {
    if (s.name !== "pgcp_operations_total" || s.labels.project !== project) continue;
    out[`${s.labels.action ?? ""} ${s.labels.status ?? ""}`] = s.value;
  }
  return out;
}

/** Every end-status arrival after the baseline poll, from the simulator's ground truth. */
async function truth(): Promise<Record<string, number>> {
  const since = micros(baselineIso);
  const out: Record<string, number> = {};
  for (const op of await t!.sim.truth(project)) {
    for (const h of op.history) {
      if (!isEndStatus(h.status) || micros(h.at) <= since) continue;
      const key = `${op.action} ${h.status}`;
      out[key] = (out[key] ?? 0) + 1;
    }
  }
  return out;
}

/** Waits until the exporter serves `expected`, then until Prometheus has scraped it. */
async function settle(expected: Record<string, number>): Promise<void> {
  expect(await truth()).toEqual(expected);
  await waitFor(
    "the exporter to count the history",
    async () => {
      const served = countsIn(await scrape(exporter!.url));
      return JSON.stringify(sorted(served)) === JSON.stringify(sorted(expected)) ? true : undefined;
    },
    { timeoutMs: 15_000 },
  );
  await waitFor(
    "Prometheus to scrape the counts",
    async () => {
      const [sum] = await prometheus!.query(`sum(pgcp_operations_total{project="${project}"})`);
      return Number(sum?.value?.[1]) === total(expected) ? true : undefined;
    },
    { timeoutMs: 15_000 },
  );
}

function sorted(counts: Record<string, number>): [string, number][] {
  return Object.entries(counts).sort(([a], [b]) => a.localeCompare(b));
}

function byKey(series: Series[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of series) {
    out[`${s.metric.action ?? ""} ${s.metric.status ?? ""}`] = Number(s.value?.[1]);
  }
  return out;
}

beforeAll(async () => {
  if (prometheusBinary === undefined) return;
  t = await startTestSimulator();
  const created = await t.sim.createProject({ plan: "paid", availability_checks: false });
  project = created.project.id;
  branch = created.branches[0]!.id;
  // Let the project's own operations (timeline, compute start) end before the first poll,
  // which counts nothing that has already ended.
  baselineIso = await t.sim.advance(10);
  state = await tempDir("pgcp-e2e-prom-state-");

  exporter = await startTestExporter(t, settings());
  await waitFor("the first poll", () =>
    exporter!.exporter.daemon.project(project)?.state !== undefined ? true : undefined,
  );

  await play(PRE);
  await waitFor("the exporter to count the pre-history", async () =>
    total(countsIn(await scrape(exporter!.url))) === total(scripted(PRE)) ? true : undefined,
  );

  // The exporter's port is known now: point Prometheus at it.
  prometheus = await startPrometheus(prometheusBinary, {
    targets: [`127.0.0.1:${exporter.port}`],
    job: JOB,
    scrapeIntervalSeconds: 1,
  });
  await waitFor(
    "Prometheus' first scrape",
    async () => {
      const [up] = await prometheus!.query(`up{job="${JOB}"}`);
      return up?.value?.[1] === "1" ? true : undefined;
    },
    { timeoutMs: 15_000 },
  );
  await settle(scripted(PRE));

  await play(PHASE1);
  await settle(scripted(add(PRE, PHASE1)));

  // Restart: a new exporter on the same port and state directory.
  const port = exporter.port;
  await exporter.stop();
  exporter = await startTestExporter(t, { ...settings(), listen: `127.0.0.1:${port}` });
  servedAtRestart = countsIn(await scrape(exporter.url));

  await play(PHASE2);
  await settle(scripted(add(PRE, PHASE1, PHASE2)));
}, 60_000);

afterAll(async () => {
  await prometheus?.stop();
  await exporter?.stop();
  await t?.close();
  await state?.remove();
});

describe("Prometheus scraping the exporter", () => {
  /** Timestamps (seconds, as Prometheus writes them) of the first and last scrape. */
  let tA: string;
  let tB: string;
  /** `[<tB - tA>ms]`: the range from the first scrape to the last, both included. */
  let range: string;

  beforeAll(async () => {
    if (prometheus === undefined) return;
    const [raw] = await prometheus.query(
      `pgcp_operations_total{project="${project}",action="apply_config",status="finished"}[1h]`,
    );
    const values = raw?.values ?? [];
    // Prometheus saw the counter before, between and after the phases (1, 1+4, 1+4+3), and
    // it never went down.
    const seen = values.map(([, v]) => Number(v));
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(seen).toEqual(expect.arrayContaining([1, 5, 8]));
    expect(seen.at(0)).toBe(1);
    tA = String(values[0]![0]);
    tB = String(values.at(-1)![0]);
    range = `[${Math.round(Number(tB) * 1000) - Math.round(Number(tA) * 1000)}ms]`;
  });

  it("scraped every count, summed by status, equal to the scripted history", async (ctx) => {
    requireBinary("prometheus", (note) => ctx.skip(note));
    const expected = scripted(add(PRE, PHASE1, PHASE2));
    const p = `project="${project}"`;

    const [sum] = await prometheus!.query(`sum(pgcp_operations_total{${p}})`, tB);
    expect(Number(sum?.value?.[1])).toBe(total(expected)); // 5 + 11 + 11 = 27

    const byStatus: Record<string, number> = {};
    for (const s of await prometheus!.query(`sum by (status) (pgcp_operations_total{${p}})`, tB)) {
      byStatus[s.metric.status ?? ""] = Number(s.value?.[1]);
    }
    // finished 1+4+3, failed 1+3+2, error 1+1+2, cancelled 1+2+1, skipped 1+1+3
    expect(byStatus).toEqual({ finished: 8, failed: 6, error: 4, cancelled: 4, skipped: 5 });

    const [up] = await prometheus!.query(`up{job="${JOB}"}`, tB);
    expect(up?.value?.[1]).toBe("1");
  });

  it("increase() over the whole history is exact, across the restart", async (ctx) => {
    requireBinary("prometheus", (note) => ctx.skip(note));
    const p = `project="${project}"`;
    // Every series has a sample at the range's start, the pre-history's value (see the top).
    const firsts = await prometheus!.query(`pgcp_operations_total{${p}}${range}`, tB);
    expect(firsts).toHaveLength(5);
    for (const s of firsts) expect(String(s.values?.[0]?.[0]), "first sample at tA").toBe(tA);

    const history = scripted(add(PHASE1, PHASE2));
    const increases = byKey(
      await prometheus!.query(`increase(pgcp_operations_total{${p}}${range})`, tB),
    );
    expect(increases).toEqual(history);

    const [sum] = await prometheus!.query(`sum(increase(pgcp_operations_total{${p}}${range}))`, tB);
    expect(Number(sum?.value?.[1])).toBe(total(history)); // 11 + 11 = 22
  });

  it("the persisted counters continue across the restart: no reset", async (ctx) => {
    requireBinary("prometheus", (note) => ctx.skip(note));
    // The restarted exporter served the totals of the pre-history and phase 1 before it polled.
    expect(servedAtRestart).toEqual(scripted(add(PRE, PHASE1)));

    const p = `project="${project}"`;
    const resets = await prometheus!.query(`resets(pgcp_operations_total{${p}}${range})`, tB);
    expect(resets).toHaveLength(5);
    for (const s of resets) expect(s.value?.[1], JSON.stringify(s.metric)).toBe("0");

    // The range does span a restart: the request counter, counted from events, started over.
    const [requests] = await prometheus!.query(
      `resets(pgcp_api_requests_total{route="listOperations",code="200"}${range})`,
      tB,
    );
    expect(Number(requests?.value?.[1])).toBeGreaterThanOrEqual(1);
  });
});
