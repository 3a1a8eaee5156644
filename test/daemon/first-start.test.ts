/**
 * First start (no state file): history is not replayed as new events, operations open at that
 * moment are followed and counted when they end, and a backfill window counts the operations
 * created within it and nothing older. Checked on the engine against the simulator's truth, and
 * on the whole exporter through `/metrics`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "../../src/api/index.js";
import { isEndStatus } from "../../src/contract/index.js";
import { FileStateStore } from "../../src/store/index.js";
import type { PollOptions } from "../../src/sync/index.js";
import { polledSync } from "../support/polled-sync.js";
import type { TruthOperation } from "../../src/simulator/index.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import {
  committedArrivals,
  micros,
  pollOptions,
  stateDir,
  truthArrivals,
  type Arrivals,
} from "../sync/support.js";
import { findSample, startTestExporter, waitFor, type TestExporter } from "./support.js";
import { simulatorAndApiClient } from "../sync/client-suite.js";

type Steps = { status: string; after_seconds: number; error?: string }[];

const FINISHED: Steps = [
  { status: "running", after_seconds: 0 },
  { status: "finished", after_seconds: 2 },
];
const STAYS_FAILED: Steps = [
  { status: "running", after_seconds: 0 },
  { status: "failed", after_seconds: 3, error: "pageserver unreachable" },
];
const RETRIED_THEN_ERROR: Steps = [
  { status: "running", after_seconds: 0 },
  { status: "failed", after_seconds: 2 },
  { status: "running", after_seconds: 5 },
  { status: "error", after_seconds: 8 },
];
const CANCELLED: Steps = [
  { status: "running", after_seconds: 0 },
  { status: "cancellation_pending", after_seconds: 2 },
  { status: "cancelled", after_seconds: 3 },
];
const SKIPPED: Steps = [
  { status: "scheduling", after_seconds: 0 },
  { status: "skipped", after_seconds: 1 },
];

/** Arrivals at end statuses of the operations `include` selects, from their whole history. */
function arrivalsOf(
  operations: readonly TruthOperation[],
  include: (op: TruthOperation, at: string) => boolean,
): Arrivals {
  const out: Arrivals = {};
  for (const op of operations) {
    for (const h of op.history) {
      if (!isEndStatus(h.status) || !include(op, h.at)) continue;
      const key = `${op.action} ${h.status}`;
      out[key] = (out[key] ?? 0) + 1;
    }
  }
  return out;
}

describe("first start, on the engine", () => {
  let sim: TestSimulator;
  let client: ApiClient;

  simulatorAndApiClient((s) => ({ sim, client } = s));

  const now = async () => Date.parse((await sim.sim.clock()).now);

  async function setup(options: Partial<PollOptions> = {}) {
    const created = await sim.sim.createProject({ plan: "paid", availability_checks: false });
    const projectId = created.project.id;
    const branchId = created.branches[0]!.id;
    const store = new FileStateStore(await stateDir());
    await store.open();
    const sync = polledSync(projectId, store, client, pollOptions(options));
    const script = async (action: string, steps: Steps) =>
      (
        await sim.sim.scriptOperation({
          project_id: projectId,
          branch_id: branchId,
          action,
          steps,
        })
      ).id;
    return { projectId, sync, script };
  }

  /** One of each end status, all ended. */
  async function history(script: (action: string, steps: Steps) => Promise<string>) {
    await script("apply_config", FINISHED);
    await script("create_branch", STAYS_FAILED);
    await script("apply_config", RETRIED_THEN_ERROR);
    await script("start_compute", CANCELLED);
    await script("suspend_compute", SKIPPED);
    await script("apply_storage_config", FINISHED);
  }

  it("counts nothing from history and follows the operations open at first start to their end", async () => {
    const { projectId, sync, script } = await setup();
    await sim.sim.advance(10);
    await history(script);
    await sim.sim.advance(20);
    const open = [
      await script("apply_config", [
        { status: "running", after_seconds: 0 },
        { status: "finished", after_seconds: 40 },
      ]),
      await script("create_branch", [
        { status: "scheduling", after_seconds: 0 },
        { status: "running", after_seconds: 5 },
        { status: "failed", after_seconds: 30 },
        { status: "running", after_seconds: 40 },
        { status: "finished", after_seconds: 60 },
      ]),
      await script("start_compute", [
        { status: "running", after_seconds: 0 },
        { status: "error", after_seconds: 50, error: "compute failed to start" },
      ]),
    ];
    await sim.sim.advance(5);
    const since = (await sim.sim.clock()).now;

    const first = await sync.step(await now());
    expect(first.kind).toBe("committed");
    if (first.kind !== "committed") return;
    expect(first.result.firstStart).toBe(true);
    expect(first.result.transitions.filter((t) => t.kind === "ended")).toEqual([]);
    expect(committedArrivals(sync.state)).toEqual({});
    expect(sync.state?.totals.retries).toEqual({});
    const open0 = sync.state?.tracked.filter((t) => t.status !== "failed").map((t) => t.id);
    expect(open0?.sort()).toEqual([...open].sort());

    // A poll with nothing new still counts nothing.
    expect((await sync.step(await now())).kind).toBe("committed");
    expect(committedArrivals(sync.state)).toEqual({});

    for (const seconds of [30, 40]) {
      await sim.sim.advance(seconds);
      expect((await sync.step(await now())).kind).toBe("committed");
    }
    const expected = await truthArrivals(sim, projectId, since);
    expect(expected).toEqual({
      "apply_config finished": 1,
      "create_branch failed": 1,
      "create_branch finished": 1,
      "start_compute error": 1,
    });
    expect(committedArrivals(sync.state)).toEqual(expected);
    expect(sync.state?.tracked.filter((t) => t.status !== "failed")).toEqual([]);
  });

  it("with a backfill window counts the operations created within it, and nothing older", async () => {
    const { projectId, sync, script } = await setup({ backfillSeconds: 250 });
    await sim.sim.advance(10);
    await history(script); // about 630 s before the first poll: outside the window
    await sim.sim.advance(600);
    await history(script); // about 30 s before the first poll: inside
    const openInWindow = await script("apply_config", [
      { status: "running", after_seconds: 0 },
      { status: "finished", after_seconds: 60 },
    ]);
    await sim.sim.advance(30);
    const since = (await sim.sim.clock()).now;
    const windowStartMicros = micros(since) - 250 * 1_000_000;

    const first = await sync.step(await now());
    expect(first.kind).toBe("committed");
    const truth = await sim.sim.truth(projectId);
    // The window holds the second history and the open operation; the endpoint's own operations
    // (auto-suspend included) and the first history lie well before it.
    const inWindow = truth.filter((op) => micros(op.created_at) >= windowStartMicros);
    expect(inWindow).toHaveLength(7);
    expect(
      truth.filter((op) => Math.abs(micros(op.created_at) - windowStartMicros) < 60e6),
    ).toEqual([]);
    const expectedFirst = arrivalsOf(inWindow, () => true);
    expect(expectedFirst).toEqual({
      "apply_config finished": 1,
      "create_branch failed": 1,
      "apply_config failed": 1,
      "apply_config error": 1,
      "start_compute cancelled": 1,
      "suspend_compute skipped": 1,
      "apply_storage_config finished": 1,
    });
    expect(committedArrivals(sync.state)).toEqual(expectedFirst);
    expect(sync.state?.tracked.some((t) => t.id === openInWindow)).toBe(true);

    await sim.sim.advance(60);
    expect((await sync.step(await now())).kind).toBe("committed");
    expect(committedArrivals(sync.state)).toEqual({
      ...expectedFirst,
      "apply_config finished": 2,
    });
  });

  // A first walk that does not reach the window's start within maxPagesPerPoll leaves a
  // catch-up segment; the catch-up must stop at the window, not replay the whole history.
  it("with a backfill window longer than one poll reads, the catch-up still stops at the window", async () => {
    const { projectId, sync, script } = await setup({ backfillSeconds: 100, maxPagesPerPoll: 2 });
    await sim.sim.advance(10);
    for (let i = 0; i < 6; i++) await script("apply_config", FINISHED);
    await sim.sim.advance(200);
    for (let i = 0; i < 12; i++) await script("create_branch", FINISHED);
    await sim.sim.advance(5);

    // 12 records in the window, 3 + 4 a poll: the first poll leaves a catch-up segment.
    const first = await sync.step(await now());
    expect(first.kind === "committed" && first.result.catchingUp).toBe(true);
    for (let i = 0; i < 10; i++) {
      const outcome = await sync.step(await now());
      expect(outcome.kind).toBe("committed");
      if (outcome.kind === "committed" && outcome.result.caughtUp) break;
    }
    expect(sync.state?.segment).toBeNull();
    expect(committedArrivals(sync.state)).toEqual({ "create_branch finished": 12 });
    expect(await truthArrivals(sim, projectId, "2025-01-01T00:00:00Z")).toMatchObject({
      "apply_config finished": 6,
    });
  });

  /*
   * With backfill, the first walk goes down to the lower of the window's start and
   * poll.firstStartLookback: records below the window are followed when open (counted from
   * then on) but not counted as history (invariant 6 in docs/design.md: operations open at
   * first start are followed).
   */
  it("with a backfill window still follows an operation open at first start that was created before the window", async () => {
    const { projectId, sync, script } = await setup({ backfillSeconds: 300 });
    await sim.sim.advance(10);
    const longRunning = await script("apply_storage_config", [
      { status: "running", after_seconds: 0 },
      { status: "finished", after_seconds: 700 },
    ]);
    await sim.sim.advance(600);
    await script("apply_config", FINISHED);
    await sim.sim.advance(30);
    const since = (await sim.sim.clock()).now;

    // Open at first start, created 630 s before it: within the first-start lookback (1 h).
    expect((await sync.step(await now())).kind).toBe("committed");
    expect(sync.state?.tracked.map((t) => t.id)).toContain(longRunning);

    await sim.sim.advance(120);
    expect((await sync.step(await now())).kind).toBe("committed");
    expect(committedArrivals(sync.state)).toMatchObject({ "apply_storage_config finished": 1 });
    const after = await truthArrivals(sim, projectId, since);
    expect(after["apply_storage_config finished"]).toBe(1);
  });
});

describe("first start, on the whole exporter", () => {
  let sim: TestSimulator;
  const exporters: TestExporter[] = [];

  beforeAll(async () => {
    // The daemon reads the wall clock, so the simulated one starts in the recent past.
    sim = await startTestSimulator({ startTime: new Date(Date.now() - 1_000_000) });
  });
  afterAll(async () => {
    await Promise.all(exporters.map((e) => e.stop()));
    await sim.close();
  });

  it("counts nothing from history without backfill, follows what is open, and backfills within poll.backfill", async () => {
    const project = async () => {
      const created = await sim.sim.createProject({ plan: "paid", availability_checks: false });
      return { id: created.project.id, branch: created.branches[0]!.id };
    };
    const plain = await project();
    const backfilled = await project();
    const script = (p: { id: string; branch: string }, action: string, steps: Steps) =>
      sim.sim.scriptOperation({ project_id: p.id, branch_id: p.branch, action, steps });
    const both = async (action: string, steps: Steps) => {
      await script(plain, action, steps);
      await script(backfilled, action, steps);
    };

    // The endpoints' own operations and their auto-suspend (300 s after the start), old
    // history 600 s before recent history, and one operation still running when the exporters
    // start, all within the first-start lookback (1 h).
    await sim.sim.advance(310);
    await both("apply_config", FINISHED);
    await both("create_branch", STAYS_FAILED);
    await sim.sim.advance(600);
    await both("apply_config", RETRIED_THEN_ERROR);
    await both("apply_storage_config", FINISHED);
    await both("create_timeline", [
      { status: "running", after_seconds: 0 },
      { status: "finished", after_seconds: 300 },
    ]);
    await sim.sim.advance(20);
    // The simulated clock is now about a minute behind the wall clock; a window of 400 s
    // reaches back past the recent history (about 90 s old) and not to the old one (690 s).
    const simNow = Date.parse((await sim.sim.clock()).now);
    expect(Math.abs(simNow - Date.now())).toBeLessThan(200_000);
    const windowStart = Date.now() - 400_000;
    for (const id of [plain.id, backfilled.id]) {
      for (const op of await sim.sim.truth(id)) {
        expect(Math.abs(Date.parse(op.created_at) - windowStart)).toBeGreaterThan(100_000);
      }
    }

    const base = { api: { url: sim.apiUrl, key: sim.apiKey } };
    const withoutBackfill = await startTestExporter({
      ...base,
      projects: [plain.id],
      state: { dir: await stateDir() },
    });
    exporters.push(withoutBackfill);
    const withBackfill = await startTestExporter({
      ...base,
      projects: [backfilled.id],
      state: { dir: await stateDir() },
      poll: { backfill: 400 },
    });
    exporters.push(withBackfill);

    const up = (e: TestExporter, project: string) =>
      waitFor(`the first poll of ${project}`, async () => {
        return (await e.value("pgcp_project_up", { project })) === 1;
      });
    await up(withoutBackfill, plain.id);
    await up(withBackfill, backfilled.id);

    // Without backfill: no arrival counted, the running operation followed.
    const plainSamples = await withoutBackfill.samples();
    expect(plainSamples.filter((s) => s.name === "pgcp_operations_total")).toEqual([]);
    expect(plainSamples.filter((s) => s.name === "pgcp_operation_duration_seconds_count")).toEqual(
      [],
    );
    expect(
      findSample(plainSamples, "pgcp_operations_open", {
        project: plain.id,
        action: "create_timeline",
      })?.value,
    ).toBe(1);

    // With backfill: exactly the recent history.
    const recent = arrivalsOf(
      await sim.sim.truth(backfilled.id),
      (op) => Date.parse(op.created_at) >= windowStart,
    );
    expect(recent).toEqual({
      "apply_config failed": 1,
      "apply_config error": 1,
      "apply_storage_config finished": 1,
    });
    const counted = async (e: TestExporter, project: string) => {
      const out: Arrivals = {};
      for (const s of await e.samples()) {
        if (s.name !== "pgcp_operations_total" || s.labels.project !== project) continue;
        if (s.value > 0) out[`${s.labels.action ?? ""} ${s.labels.status ?? ""}`] = s.value;
      }
      return out;
    };
    expect(await counted(withBackfill, backfilled.id)).toEqual(recent);

    // The running operation ends: both count it once.
    await sim.sim.advance(300);
    await waitFor("the end of the running operation", async () => {
      const a = await counted(withoutBackfill, plain.id);
      const b = await counted(withBackfill, backfilled.id);
      return a["create_timeline finished"] === 1 && b["create_timeline finished"] === 1;
    });
    expect(await counted(withoutBackfill, plain.id)).toEqual({ "create_timeline finished": 1 });
    expect(await counted(withBackfill, backfilled.id)).toEqual({
      ...recent,
      "create_timeline finished": 1,
    });
  });
});
