/**
 * What the log shows of a poll's transitions: a line per operation that ended, failed, was
 * retried, got stuck or recovered; a catch-up's hundreds of successful endings in one summary
 * line (and one by one at debug), its failures still one by one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENDINGS_LOGGED_EACH, planTransitionLog } from "../../src/daemon/transition-log.js";
import type { OperationSnapshot, Transition } from "../../src/sync/index.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { startTestExporter, tempDir, waitFor, type LogLine, type TestExporter } from "./support.js";
import { runsThen } from "../support/operation-steps.js";

const HISTORY = 250;

function op(n: number, status: string, action = "start_compute"): OperationSnapshot {
  return {
    id: `op-${n}`,
    projectId: "p",
    branchId: undefined,
    endpointId: undefined,
    action,
    status,
    failuresCount: status === "failed" ? 1 : 0,
    createdAtMs: n,
    updatedAtMs: n,
    durationMs: 0,
    error: undefined,
  };
}

const finished = (n: number): Transition => ({
  kind: "ended",
  op: op(n, "finished"),
  status: "finished",
  count: 1,
  durationSeconds: 1,
});

describe("which transitions get a line of their own", () => {
  it("logs up to the limit of successful endings one by one, beyond it sums them up", () => {
    const upTo = Array.from({ length: ENDINGS_LOGGED_EACH }, (_, n) => finished(n));
    expect(planTransitionLog(upTo)).toEqual({ each: upTo, summarised: [], summary: undefined });

    const failed: Transition = {
      kind: "ended",
      op: op(900, "failed", "create_branch"),
      status: "failed",
      count: 2,
      durationSeconds: 1,
    };
    const stuck: Transition = { kind: "stuck", op: op(901, "running"), openSeconds: 7200 };
    const seen: Transition = { kind: "new", op: op(902, "running") };
    const cancelled: Transition = {
      kind: "ended",
      op: op(903, "cancelled", "apply_config"),
      status: "cancelled",
      count: 1,
      durationSeconds: 1,
    };
    const plan = planTransitionLog([...upTo, failed, stuck, seen, cancelled]);
    expect(plan.each).toEqual([failed, stuck]);
    expect(plan.summarised).toEqual([...upTo, cancelled]);
    expect(plan.summary).toEqual({
      ended: ENDINGS_LOGGED_EACH + 1,
      statuses: { finished: ENDINGS_LOGGED_EACH, cancelled: 1 },
      actions: { start_compute: ENDINGS_LOGGED_EACH, apply_config: 1 },
    });
  });
});

describe("a failure between two polls", () => {
  let sim: TestSimulator;
  afterAll(async () => {
    await sim.close();
  });

  it("is logged as failed, though the operation was retried and finished since", async () => {
    sim = await startTestSimulator();
    const created = await sim.sim.createProject({ availability_checks: false });
    const projectId = created.project.id;
    const branchId = created.branches[0]?.id ?? "";
    const e = await startTestExporter({
      api: { url: sim.apiUrl, key: sim.apiKey },
      projects: [projectId],
      state: { dir: await tempDir() },
      poll: { interval: 3600, jitter: 0 },
    });
    try {
      await waitFor(
        "the first poll",
        async () => (await e.value("pgcp_project_up", { project: projectId })) === 1 || undefined,
      );
      // Fails twice and finishes, all between two polls.
      const op = await sim.sim.scriptOperation({
        project_id: projectId,
        branch_id: branchId,
        action: "create_branch",
        steps: [
          { status: "running", after_seconds: 0 },
          { status: "failed", after_seconds: 1, error: "storage unavailable" },
          { status: "running", after_seconds: 2 },
          { status: "failed", after_seconds: 3, error: "storage unavailable" },
          { status: "running", after_seconds: 4 },
          { status: "finished", after_seconds: 5 },
        ],
      });
      await sim.sim.advance(10);
      const nudged = await fetch(`${e.exporter.server.url}/-/nudge?project=${projectId}`, {
        method: "POST",
      });
      expect(nudged.status).toBe(202);
      const lines = await waitFor("the operation's lines", () => {
        const found = e.logs.lines().filter((l) => l.operation === op.id);
        return found.some((l) => l.status === "finished") ? found : undefined;
      });
      const ended = lines.filter((l) => l.msg === "operation ended");
      expect(ended.map((l) => [l.status, l.count, l.now])).toEqual([
        ["failed", 2, "finished"],
        ["finished", undefined, undefined],
      ]);
    } finally {
      await e.stop();
    }
  });
});

describe("transition log lines", () => {
  let sim: TestSimulator;
  let projectId: string;
  let failedId: string;

  beforeAll(async () => {
    sim = await startTestSimulator({ startTime: new Date(Date.now() - 3_600_000) });
    // A finished history of 250 operations over the last half hour, and one that failed.
    const { project_ids } = await sim.sim.bulk({
      projects: 1,
      operations_per_project: HISTORY,
      span_seconds: 1800,
    });
    projectId = project_ids[0] ?? "";
    const endpoints = await sim.api<{ endpoints: { branch_id: string }[] }>(
      "GET",
      `/projects/${projectId}/endpoints`,
    );
    const failed = await sim.sim.scriptOperation({
      project_id: projectId,
      branch_id: endpoints.body.endpoints[0]?.branch_id ?? "",
      action: "create_branch",
      steps: runsThen("failed", 2, "storage unavailable"),
    });
    failedId = failed.id;
    await sim.sim.advance(10);
  });
  afterAll(async () => {
    await sim.close();
  });

  /** Backfills the whole history with the given log level; returns its lines once counted. */
  async function backfill(level: string): Promise<{ e: TestExporter; lines: LogLine[] }> {
    const e = await startTestExporter({
      api: { url: sim.apiUrl, key: sim.apiKey },
      projects: [projectId],
      state: { dir: await tempDir() },
      poll: { backfill: 7200 },
      log: { level },
    });
    await waitFor("the whole history counted", () => {
      const totals = e.exporter.daemon.project(projectId)?.state?.totals;
      const counted = totals?.arrivals.reduce((n, a) => n + a.count, 0) ?? 0;
      return (
        counted === HISTORY + 1 && e.exporter.daemon.project(projectId)?.state?.segment === null
      );
    });
    await e.stop();
    return { e, lines: e.logs.lines() };
  }

  const endedLines = (lines: LogLine[], level: string) =>
    lines.filter((l) => l.level === level && l.transition === "ended");

  it("sums up a catch-up's successful endings in one line at info, and logs its failure alone", async () => {
    const { lines } = await backfill("info");
    const summaries = lines.filter((l) => l.msg.includes("operations ended"));
    expect(summaries.length).toBeGreaterThan(0);
    expect(summaries.every((l) => l.level === "info" && l.project === projectId)).toBe(true);
    const each = endedLines(lines, "info");
    // Every arrival is in the log once: in a summary, or on a line of its own.
    const summed = summaries.reduce((n, l) => n + (l.ended as number), 0);
    expect(summed + each.length).toBe(HISTORY + 1);
    expect(summed).toBeGreaterThan(100);
    expect(each.filter((l) => l.status === "failed").map((l) => l.operation)).toEqual([failedId]);
    const statuses = summaries.map((l) => l.statuses as Record<string, number>);
    expect(statuses.reduce((n, s) => n + (s.finished ?? 0), 0)).toBe(summed);
    expect(endedLines(lines, "debug")).toEqual([]);
  });

  it("logs every ending on a line of its own at debug", async () => {
    const { lines } = await backfill("debug");
    const ids = new Set(
      [...endedLines(lines, "debug"), ...endedLines(lines, "info")].map((l) => l.operation),
    );
    expect(ids.size).toBe(HISTORY + 1);
    expect(ids.has(failedId)).toBe(true);
  });
});
