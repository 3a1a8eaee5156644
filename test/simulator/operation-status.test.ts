/** Operation statuses, their transitions and counters (seed 3.1, 7; real API fields). */
import { beforeEach, describe, expect, test } from "vitest";
import type { Operation } from "../../src/contract/index.js";
import type { SimScriptOperationRequest } from "../../src/simulator/index.js";
import type { TestSimulator } from "../support/simulator.js";
import { simulatorWithProject } from "../support/simulator-suite.js";
import { getOperation } from "./fixtures.js";

let t: TestSimulator;
let projectId: string;
let branchId: string;
let endpointId: string;

simulatorWithProject((s) => ({ t, projectId, branchId } = s), { each: true, advance: 10 });
beforeEach(async () => {
  const truth = await t.sim.truth(projectId);
  endpointId = truth.find((o) => o.endpoint_id !== undefined)?.endpoint_id ?? "";
});

type Steps = SimScriptOperationRequest["steps"];

async function scripted(steps: Steps, action = "apply_config"): Promise<Operation> {
  return t.sim.scriptOperation({ project_id: projectId, branch_id: branchId, action, steps });
}

/** Advances to `seconds` after the operation's creation and reads it. */
async function at(op: Operation, elapsed: { value: number }, seconds: number): Promise<Operation> {
  await t.sim.advance(seconds - elapsed.value);
  elapsed.value = seconds;
  return getOperation(t, projectId, op.id);
}

describe("status paths", () => {
  test("scheduling → running → finished; updated_at and total_duration_ms follow", async () => {
    const op = await scripted([
      { status: "scheduling", after_seconds: 0 },
      { status: "running", after_seconds: 5 },
      { status: "finished", after_seconds: 12 },
    ]);
    expect(op).toMatchObject({ status: "scheduling", failures_count: 0, total_duration_ms: 0 });
    expect(op.updated_at).toBe(op.created_at);
    const elapsed = { value: 0 };
    const running = await at(op, elapsed, 5);
    expect(running).toMatchObject({ status: "running", total_duration_ms: 5000 });
    expect(Date.parse(running.updated_at) - Date.parse(op.created_at)).toBe(5000);
    const finished = await at(op, elapsed, 12);
    expect(finished).toMatchObject({ status: "finished", total_duration_ms: 12_000 });
    expect(finished.error).toBeUndefined();
    expect(finished.retry_at).toBeUndefined();
    expect(finished.endpoint_id).toBeUndefined();
  });

  test("failed, retried, finished: failures_count, error and retry_at", async () => {
    const op = await scripted([
      { status: "running", after_seconds: 0 },
      { status: "failed", after_seconds: 3, error: "pageserver unreachable" },
      { status: "running", after_seconds: 13 },
      { status: "finished", after_seconds: 20 },
    ]);
    const elapsed = { value: 0 };
    const failed = await at(op, elapsed, 3);
    expect(failed).toMatchObject({
      status: "failed",
      failures_count: 1,
      error: "pageserver unreachable",
    });
    expect(failed.retry_at).toBeUndefined();
    const retried = await at(op, elapsed, 13);
    expect(retried).toMatchObject({ status: "running", failures_count: 1 });
    expect(retried.retry_at).toBe(retried.updated_at);
    expect(retried.error).toBeUndefined();
    const finished = await at(op, elapsed, 20);
    expect(finished).toMatchObject({
      status: "finished",
      failures_count: 1,
      total_duration_ms: 20_000,
    });
    expect(finished.retry_at).toBe(retried.retry_at);
  });

  test("error is terminal and counts as a failure, also after a failed attempt", async () => {
    const direct = await scripted([
      { status: "running", after_seconds: 0 },
      { status: "error", after_seconds: 2 },
    ]);
    const twice = await scripted([
      { status: "running", after_seconds: 0 },
      { status: "failed", after_seconds: 1, error: "first" },
      { status: "running", after_seconds: 2 },
      { status: "error", after_seconds: 4, error: "second" },
    ]);
    await t.sim.advance(10);
    expect(await getOperation(t, projectId, direct.id)).toMatchObject({
      status: "error",
      failures_count: 1,
      error: "operation failed (simulated)",
    });
    expect(await getOperation(t, projectId, twice.id)).toMatchObject({
      status: "error",
      failures_count: 2,
      error: "second",
    });
  });

  test("cancellation: running → cancellation_pending → cancelled", async () => {
    const op = await scripted([
      { status: "running", after_seconds: 0 },
      { status: "cancellation_pending", after_seconds: 2 },
      { status: "cancelled", after_seconds: 3 },
    ]);
    const elapsed = { value: 0 };
    expect((await at(op, elapsed, 2)).status).toBe("cancellation_pending");
    expect(await at(op, elapsed, 3)).toMatchObject({ status: "cancelled", failures_count: 0 });
  });

  test("skipped, a status stuck in failed, and statuses nobody documented", async () => {
    const skipped = await scripted([
      { status: "scheduling", after_seconds: 0 },
      { status: "skipped", after_seconds: 1 },
    ]);
    const stuck = await scripted([
      { status: "running", after_seconds: 0 },
      { status: "failed", after_seconds: 1 },
    ]);
    const novel = await scripted(
      [{ status: "paused_for_maintenance", after_seconds: 0 }],
      "switch_pageserver",
    );
    await t.sim.advance(3600);
    expect((await getOperation(t, projectId, skipped.id)).status).toBe("skipped");
    expect(await getOperation(t, projectId, stuck.id)).toMatchObject({
      status: "failed",
      failures_count: 1,
    });
    expect(await getOperation(t, projectId, novel.id)).toMatchObject({
      status: "paused_for_maintenance",
      action: "switch_pageserver",
    });
  });

  test("steps at the same instant are all applied before the answer", async () => {
    const op = await scripted([
      { status: "running", after_seconds: 0 },
      { status: "failed", after_seconds: 0 },
    ]);
    expect(op).toMatchObject({ status: "failed", failures_count: 1 });
  });
});

describe("ground truth", () => {
  test("every arrival with its exact time and the failures so far, newest operation first", async () => {
    const first = await scripted([
      { status: "running", after_seconds: 0 },
      { status: "failed", after_seconds: 1.5 },
      { status: "running", after_seconds: 2 },
      { status: "finished", after_seconds: 3 },
    ]);
    await t.sim.advance(1);
    const second = await scripted([{ status: "running", after_seconds: 0 }], "start_compute");
    await t.sim.advance(5);
    const truth = await t.sim.truth(projectId);
    expect(truth[0]?.id).toBe(second.id);
    const record = truth.find((o) => o.id === first.id);
    expect(record?.history.map((h) => [h.status, h.failures_count])).toEqual([
      ["running", 0],
      ["failed", 1],
      ["running", 1],
      ["finished", 1],
    ]);
    const times = record?.history.map((h) => Date.parse(h.at) - Date.parse(first.created_at));
    expect(times).toEqual([0, 1500, 2000, 3000]);
    expect(record).toMatchObject({ status: "finished", failures_count: 1 });
  });
});

describe("scripting", () => {
  test("an endpoint-scoped operation carries endpoint_id", async () => {
    const op = await t.sim.scriptOperation({
      project_id: projectId,
      branch_id: branchId,
      endpoint_id: endpointId,
      action: "apply_config",
      steps: [{ status: "running", after_seconds: 0 }],
    });
    expect(op.endpoint_id).toBe(endpointId);
  });

  test("invalid scripts answer 400, unknown references 404", async () => {
    const base = { project_id: projectId, branch_id: branchId, action: "apply_config" };
    const bad: unknown[] = [
      { ...base, steps: [] },
      { ...base, steps: [{ status: "running", after_seconds: 1 }] },
      {
        ...base,
        steps: [
          { status: "running", after_seconds: 0 },
          { status: "finished", after_seconds: 5 },
          { status: "failed", after_seconds: 4 },
        ],
      },
      { ...base, steps: [{ status: "", after_seconds: 0 }] },
      { ...base, action: "", steps: [{ status: "running", after_seconds: 0 }] },
      "{not json",
    ];
    for (const body of bad) {
      expect(
        (await t.request("POST", "/_sim/operations", { body })).status,
        JSON.stringify(body),
      ).toBe(400);
    }
    const steps = [{ status: "running", after_seconds: 0 }];
    for (const body of [
      { ...base, project_id: "no-such-project", steps },
      { ...base, branch_id: "br-none", steps },
      { ...base, endpoint_id: "ep-none", steps },
    ]) {
      expect((await t.request("POST", "/_sim/operations", { body })).status).toBe(404);
    }
  });
});
