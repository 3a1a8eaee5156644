/** The compute state machine over simulated time (seed 3.2, 3.3) and availability checks. */
import { afterEach, describe, expect, test } from "vitest";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { endpointCall, getEndpoint, operationsWithAction, readyProject } from "./fixtures.js";
import { runsThen } from "../support/operation-steps.js";

let t: TestSimulator;

afterEach(async () => {
  await t.close();
});

/** readyProject advances 5 s; the compute became active at 4 s. */
const ACTIVE_SINCE = 4;

describe("auto-suspend", () => {
  test("after 300 s without activity: a suspend_compute, then idle", async () => {
    t = await startTestSimulator();
    const p = await readyProject(t);
    await t.sim.advance(ACTIVE_SINCE + 300 - 5 - 1);
    expect((await getEndpoint(t, p.projectId, p.endpoint.id)).current_state).toBe("active");
    await t.sim.advance(1);
    const suspending = await getEndpoint(t, p.projectId, p.endpoint.id);
    expect(suspending).toMatchObject({ current_state: "active", pending_state: "idle" });
    const [suspend] = await operationsWithAction(t, p.projectId, "suspend_compute");
    expect(suspend).toMatchObject({ status: "running", endpoint_id: p.endpoint.id });
    expect(suspend?.created_at).toBe("2025-01-01T00:05:04Z");
    await t.sim.advance(1);
    const idle = await getEndpoint(t, p.projectId, p.endpoint.id);
    expect(idle.current_state).toBe("idle");
    expect(idle.pending_state).toBeUndefined();
    expect(idle.suspended_at).toBe("2025-01-01T00:05:05Z");
    expect(idle.last_active).toBe(p.endpoint.last_active);
  });

  test("a chosen delay, counted from the last activity", async () => {
    t = await startTestSimulator();
    const p = await readyProject(t);
    await endpointCall(t, "PATCH", `/projects/${p.projectId}/endpoints/${p.endpoint.id}`, 200, {
      endpoint: { suspend_timeout_seconds: 60 },
    });
    await t.sim.advance(ACTIVE_SINCE + 60 - 5 - 1);
    expect(await operationsWithAction(t, p.projectId, "suspend_compute")).toHaveLength(0);
    await t.sim.advance(2);
    expect((await getEndpoint(t, p.projectId, p.endpoint.id)).current_state).toBe("idle");
  });

  test("-1 never suspends", async () => {
    t = await startTestSimulator();
    const p = await readyProject(t);
    await endpointCall(t, "PATCH", `/projects/${p.projectId}/endpoints/${p.endpoint.id}`, 200, {
      endpoint: { suspend_timeout_seconds: -1 },
    });
    await t.sim.advance(7 * 86_400);
    expect((await getEndpoint(t, p.projectId, p.endpoint.id)).current_state).toBe("active");
    expect(await operationsWithAction(t, p.projectId, "suspend_compute")).toHaveLength(0);
  });

  test("a suspend that comes due while an operation holds the endpoint waits for it", async () => {
    t = await startTestSimulator();
    const p = await readyProject(t);
    await t.sim.scriptOperation({
      project_id: p.projectId,
      branch_id: p.endpoint.branch_id,
      endpoint_id: p.endpoint.id,
      action: "apply_config",
      steps: runsThen("finished", 400),
    });
    await t.sim.advance(399);
    expect((await getEndpoint(t, p.projectId, p.endpoint.id)).current_state).toBe("active");
    await t.sim.advance(2);
    const [suspend] = await operationsWithAction(t, p.projectId, "suspend_compute");
    expect(suspend?.created_at).toBe("2025-01-01T00:06:45Z");
  });
});

describe("connections", () => {
  test("a connection wakes an idle endpoint with a start_compute", async () => {
    t = await startTestSimulator();
    const p = await readyProject(t);
    await t.sim.advance(301);
    expect((await getEndpoint(t, p.projectId, p.endpoint.id)).current_state).toBe("idle");
    const woken = await t.sim.connect(p.endpoint.id);
    expect(woken.endpoint).toMatchObject({ current_state: "idle", pending_state: "active" });
    expect(woken.operations.map((o) => [o.action, o.status])).toEqual([
      ["start_compute", "running"],
    ]);
    await t.sim.advance(2);
    const active = await getEndpoint(t, p.projectId, p.endpoint.id);
    expect(active.current_state).toBe("active");
    expect(active.last_active).toBe("2025-01-01T00:05:08Z");
  });

  test("a connection to an active endpoint starts nothing and postpones the suspend", async () => {
    t = await startTestSimulator();
    const p = await readyProject(t);
    await t.sim.advance(200);
    const kept = await t.sim.connect(p.endpoint.id);
    expect(kept.operations).toEqual([]);
    expect(kept.endpoint.last_active).toBe("2025-01-01T00:03:25Z");
    await t.sim.advance(299);
    expect(await operationsWithAction(t, p.projectId, "suspend_compute")).toHaveLength(0);
    await t.sim.advance(2);
    expect(await operationsWithAction(t, p.projectId, "suspend_compute")).toHaveLength(1);
  });

  test("a connection during a suspend queues a start after it", async () => {
    t = await startTestSimulator();
    const p = await readyProject(t);
    await t.sim.advance(ACTIVE_SINCE + 300 - 5);
    const queued = await t.sim.connect(p.endpoint.id);
    expect(queued.endpoint.pending_state).toBe("active");
    expect(queued.operations.map((o) => [o.action, o.status])).toEqual([
      ["start_compute", "scheduling"],
    ]);
    await t.sim.advance(3);
    expect((await getEndpoint(t, p.projectId, p.endpoint.id)).current_state).toBe("active");
    const history = (await operationsWithAction(t, p.projectId, "suspend_compute"))[0];
    expect(history?.status).toBe("finished");
  });

  test("connecting to an unknown endpoint answers 404", async () => {
    t = await startTestSimulator();
    expect((await t.request("POST", "/_sim/endpoints/ep-none-000000/connect")).status).toBe(404);
  });
});

describe("availability checks", () => {
  test("periodic check_availability for branches that have an endpoint, and only those", async () => {
    t = await startTestSimulator({ availabilityCheckSeconds: 60 });
    const p = await readyProject(t, "paid", 3);
    await endpointCall(t, "POST", `/projects/${p.projectId}/endpoints`, 201, {
      endpoint: { branch_id: p.branchIds[1], type: "read_only" },
    });
    const optedOut = await t.sim.createProject({ plan: "paid", availability_checks: false });
    await t.sim.advance(600);
    const checks = await operationsWithAction(t, p.projectId, "check_availability");
    expect(checks.length).toBeGreaterThanOrEqual(2 * 9);
    const branches = new Set(checks.map((c) => c.branch_id));
    expect(branches).toEqual(new Set([p.branchIds[0], p.branchIds[1]]));
    expect(checks.every((c) => c.endpoint_id !== undefined)).toBe(true);
    expect(checks.some((c) => c.status === "finished")).toBe(true);
    const times = checks
      .filter((c) => c.branch_id === p.branchIds[0])
      .map((c) => Date.parse(c.created_at))
      .sort((a, b) => a - b);
    const gaps = times.slice(1).map((time, i) => time - (times[i] ?? 0));
    expect(gaps.every((gap) => gap === 60_000)).toBe(true);
    expect(await operationsWithAction(t, optedOut.project.id, "check_availability")).toEqual([]);
  });

  test("off by default", async () => {
    t = await startTestSimulator();
    const p = await readyProject(t);
    await t.sim.advance(3600);
    expect(await operationsWithAction(t, p.projectId, "check_availability")).toEqual([]);
  });
});
