/**
 * Exact counts when the operations log misbehaves (invariants 8 and 9, docs/design.md): pages that
 * overlap, cursors that lead back, full pages without a cursor, records dated in the future or out
 * of order, records that claim another project. Each runs a project's sync (the real API client,
 * the file store) against the simulator, whose fault injection plays the broken proxy, server bug
 * or skewed clock, and compares what was committed with the simulator's ground truth.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { ApiClient } from "../../src/api/index.js";
import { polledSync } from "../support/polled-sync.js";
import {
  WalkError,
  type PollOptions,
  type PollResult,
  type StepOutcome,
} from "../../src/sync/index.js";
import type { TestSimulator } from "../support/simulator.js";
import {
  committedArrivals,
  pollOptions,
  openStateStore,
  truthArrivals,
  type Arrivals,
} from "./support.js";
import { simulatorAndApiClient } from "./client-suite.js";

let sim: TestSimulator;
let client: ApiClient;

simulatorAndApiClient((s) => ({ sim, client } = s), {
  startTime: new Date(Date.now() - 3_600_000),
});
beforeEach(async () => {
  await sim.sim.clearFaults();
});

/** A project with its sync, polled at the simulator's time. */
async function watched(options: Partial<PollOptions> = {}) {
  const created = await sim.sim.createProject({ plan: "paid", availability_checks: false });
  const projectId = created.project.id;
  const branchId = created.branches[0]?.id ?? "";
  await sim.sim.advance(5);
  const store = await openStateStore();
  const sync = polledSync(
    projectId,
    store,
    client,
    pollOptions({ firstPageLimit: 5, pageLimit: 5, maxPagesPerPoll: 20, ...options }),
  );
  const now = async () => Date.parse((await sim.sim.clock()).now);
  const step = async (): Promise<StepOutcome> => sync.step(await now());
  const committed = async (): Promise<PollResult> => {
    const outcome = await step();
    if (outcome.kind !== "committed") {
      throw new Error(`expected a commit, got ${outcome.kind}: ${String(errorOf(outcome))}`);
    }
    return outcome.result;
  };
  // The first start sets the checkpoint; what follows is counted.
  await committed();
  const since = (await sim.sim.clock()).now;
  /** Scripts `count` operations that finish a second after they start, one per second. */
  const script = async (
    count: number,
    fields: { action?: string; offsetSeconds?: number; status?: string; error?: string } = {},
  ): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const operation = await sim.sim.scriptOperation({
        project_id: projectId,
        branch_id: branchId,
        action: fields.action ?? "apply_config",
        steps: [
          { status: "running", after_seconds: 0 },
          {
            status: fields.status ?? "finished",
            after_seconds: 1,
            ...(fields.error === undefined ? {} : { error: fields.error }),
          },
        ],
        ...(fields.offsetSeconds === undefined
          ? {}
          : { created_at_offset_seconds: fields.offsetSeconds }),
      });
      ids.push(operation.id);
      await sim.sim.advance(1);
    }
    await sim.sim.advance(2);
    return ids;
  };
  const truth = (): Promise<Arrivals> => truthArrivals(sim, projectId, since);
  return { projectId, sync, step, committed, script, truth };
}

function errorOf(outcome: StepOutcome): unknown {
  return outcome.kind === "poll_failed" || outcome.kind === "commit_failed"
    ? outcome.error
    : undefined;
}

function anomalies(result: PollResult): Record<string, number> {
  return Object.fromEntries(result.anomalies.map((a) => [a.kind, a.count]));
}

/** listOperations requests the simulator served so far. */
async function listRequests(): Promise<number> {
  const stats = await sim.sim.stats();
  return Object.values(stats.routes.listOperations ?? {}).reduce((n, c) => n + c, 0);
}

describe("a walk that checks its own answers", () => {
  it("counts each operation once when every page repeats the previous page's last record", async () => {
    const p = await watched();
    await p.script(12);
    await sim.sim.addFault({ route: "listOperations", kind: "overlap" });
    const result = await p.committed();
    expect(committedArrivals(p.sync.state)).toEqual(await p.truth());
    expect(committedArrivals(p.sync.state)).toEqual({ "apply_config finished": 12 });
    expect(anomalies(result).duplicate_record).toBeGreaterThanOrEqual(2);
    // And nothing more on the next poll through the same overlapping pages.
    await p.script(3);
    await p.committed();
    expect(committedArrivals(p.sync.state)).toEqual({ "apply_config finished": 15 });
  });

  it("fails the poll, committing nothing, when the cursors lead back (c1 -> c2 -> c1)", async () => {
    const p = await watched();
    // Four pages of new records: the third is sent back to the second page's cursor.
    await p.script(17);
    const before = p.sync.state;
    await sim.sim.addFault({ route: "listOperations", kind: "cursor_cycle" });
    const requests = await listRequests();
    const outcome = await p.step();
    expect(outcome.kind).toBe("poll_failed");
    const error = errorOf(outcome);
    expect(error).toBeInstanceOf(WalkError);
    expect((error as WalkError).kind).toBe("cursor_revisited");
    expect(String(error)).toMatch(/was already followed in this walk: the pages form a loop/);
    // Stopped at the first page that led back, not at the page budget (20).
    expect((await listRequests()) - requests).toBe(3);
    expect(p.sync.state).toBe(before);
    await sim.sim.clearFaults();
    await p.committed();
    expect(committedArrivals(p.sync.state)).toEqual({ "apply_config finished": 17 });
  });

  it("fails the poll when a full page comes without a cursor, and counts everything once it does not", async () => {
    const p = await watched();
    await p.script(12);
    await sim.sim.addFault({ route: "listOperations", kind: "no_pagination" });
    const outcome = await p.step();
    expect(outcome.kind).toBe("poll_failed");
    expect(String(errorOf(outcome))).toMatch(/full page of 5 came without pagination.cursor/);
    expect(committedArrivals(p.sync.state)).toEqual({});
    await sim.sim.clearFaults();
    await p.committed();
    expect(committedArrivals(p.sync.state)).toEqual(await p.truth());
    expect(committedArrivals(p.sync.state)).toEqual({ "apply_config finished": 12 });
  });
});

describe("time in the records", () => {
  it("counts a record dated in 2100 once and keeps counting what comes after it", async () => {
    const p = await watched({ futureToleranceSeconds: 600 });
    // About 75 years ahead of the simulated clock.
    const [future] = await p.script(1, {
      action: "create_branch",
      offsetSeconds: 75 * 365 * 86_400,
    });
    await p.script(2);
    const first = await p.committed();
    expect(anomalies(first).future_record).toBe(1);
    expect(first.anomalies.find((a) => a.kind === "future_record")?.example).toBe(future);
    const nowSecond = Math.floor(Date.parse((await sim.sim.clock()).now) / 1000);
    expect(p.sync.state?.watermark.second).toBeLessThanOrEqual(nowSecond + 600);
    expect(p.sync.state?.misdated?.map((f) => f.id)).toEqual([future]);

    for (let round = 0; round < 3; round++) {
      await p.script(4);
      const later = await p.committed();
      // Reported once, when first seen; not counted again.
      expect(anomalies(later).future_record).toBeUndefined();
    }
    expect(committedArrivals(p.sync.state)).toEqual(await p.truth());
    expect(committedArrivals(p.sync.state)).toEqual({
      "create_branch finished": 1,
      "apply_config finished": 14,
    });
  });

  it("does not let a record dated 1900 hide the records after it", async () => {
    // Page by page: [new-1, 1900-record] then [new-2, ...]; and all in one page.
    for (const pageLimit of [2, 5]) {
      const p = await watched({ firstPageLimit: pageLimit, pageLimit });
      await p.script(1, { action: "create_branch" }); // new-2
      await p.script(1, { action: "create_timeline", offsetSeconds: -126 * 365 * 86_400 });
      await p.script(1, { action: "start_compute" }); // new-1
      const result = await p.committed();
      expect(anomalies(result).out_of_order_record).toBe(1);
      expect(committedArrivals(p.sync.state)).toEqual({
        "create_branch finished": 1,
        "create_timeline finished": 1,
        "start_compute finished": 1,
      });
      await p.script(2);
      await p.committed();
      await p.committed();
      expect(committedArrivals(p.sync.state)).toEqual(await p.truth());
    }
  });

  it("counts a record dated 1900 once when it is the newest in the log, poll after poll", async () => {
    const p = await watched();
    const [past] = await p.script(1, {
      action: "create_timeline",
      offsetSeconds: -126 * 365 * 86_400,
    });
    const first = await p.committed();
    expect(anomalies(first).out_of_order_record).toBe(1);
    expect(p.sync.state?.misdated?.map((m) => m.id)).toEqual([past]);
    // Still the newest record: known, passed over, not counted again.
    await p.committed();
    await p.committed();
    expect(committedArrivals(p.sync.state)).toEqual({ "create_timeline finished": 1 });
    // Newer records move the checkpoint past it: it is forgotten, and never met again.
    await p.script(2);
    await p.committed();
    await p.committed();
    expect(p.sync.state?.misdated).toBeUndefined();
    expect(committedArrivals(p.sync.state)).toEqual(await p.truth());
    expect(committedArrivals(p.sync.state)).toEqual({
      "create_timeline finished": 1,
      "apply_config finished": 2,
    });
  });
});

describe("records of the project whose log was read", () => {
  it("attributes a record that claims another project to this one, and says so", async () => {
    const p = await watched();
    await p.script(3);
    await sim.sim.addFault({ route: "listOperations", kind: "foreign_project" });
    const result = await p.committed();
    expect(anomalies(result).foreign_project).toBe(3);
    const ended = result.transitions.filter((t) => t.kind === "ended");
    expect(ended).toHaveLength(3);
    for (const t of ended) expect(t.op.projectId).toBe(p.projectId);
    expect(committedArrivals(p.sync.state)).toEqual({ "apply_config finished": 3 });
  });
});

describe("what is kept of a record is bounded", () => {
  it("keeps 20 undocumented actions per project, puts further and unlabel-like ones under other", async () => {
    const p = await watched({ maxUnknownLabelValues: 20 });
    for (let i = 0; i < 30; i++) await p.script(1, { action: `custom_action_${i}` });
    await p.script(1, { action: "x".repeat(200_000) });
    await p.script(1, { action: "Not A Label!" });
    const result = await p.committed();
    expect(anomalies(result).label_overflow).toBe(12);
    const actions = new Set(p.sync.state?.totals.arrivals.map((a) => a.action));
    expect(actions.size).toBe(21);
    expect(actions.has("other")).toBe(true);
    expect(committedArrivals(p.sync.state)["other finished"]).toBe(12);
    // The walk reads newest first: the 20 newest undocumented actions were taken. What was
    // taken stays taken (it is read back from the committed state); the rest stays other.
    expect(actions.has("custom_action_29")).toBe(true);
    expect(actions.has("custom_action_9")).toBe(false);
    await p.script(1, { action: "custom_action_3" });
    await p.script(1, { action: "custom_action_29" });
    await p.committed();
    expect(committedArrivals(p.sync.state)["custom_action_29 finished"]).toBe(2);
    expect(committedArrivals(p.sync.state)["other finished"]).toBe(13);
  });

  it("cuts an error text of a megabyte to the limit, with a marker", async () => {
    const p = await watched();
    await p.script(1, { status: "error", error: "e".repeat(1024 * 1024) });
    const result = await p.committed();
    expect(anomalies(result).error_truncated).toBe(1);
    const failed = result.transitions.find((t) => t.kind === "ended");
    expect(failed?.op.error?.length).toBeLessThan(2_100);
    expect(failed?.op.error).toMatch(/… \[truncated: 1048576 characters\]$/);
  });
});
