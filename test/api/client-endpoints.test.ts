/** Every endpoint call of the client against the simulator, and its rules as the client sees them. */
import { afterEach, describe, expect, it } from "vitest";
import { createApiClient } from "../../src/api/index.js";
import type { TestSimulator } from "../support/simulator.js";
import {
  apiErrorOf,
  simulatorAndClient,
  expectNoSecret,
  readyProject,
  whileAdvancing,
  type TestClient,
} from "./support/client.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let t: TestSimulator;
let c: TestClient;

simulatorAndClient((s) => ({ t, c } = s));

afterEach(async () => {
  await t.sim.clearFaults();
});

describe("endpoint calls", () => {
  it("creates, reads, suspends, starts, restarts, updates and deletes an endpoint", async () => {
    const { api } = c;
    const { projectId, branchIds } = await readyProject(t, "paid", 2);
    const branchId = branchIds[1] ?? "";
    const wait = (ops: Parameters<typeof api.waitForOperations>[1]) =>
      whileAdvancing(t.sim, api.waitForOperations(projectId, ops, { intervalMs: 5 }));

    const created = await api.createEndpoint(projectId, {
      branch_id: branchId,
      type: "read_write",
    });
    expect(created.endpoint).toMatchObject({ branch_id: branchId, current_state: "init" });
    expect(created.operations.map((o) => [o.action, o.status])).toEqual([
      ["start_compute", "running"],
    ]);
    const endpointId = created.endpoint.id;
    const started = await wait(created.operations);
    expect(started).toMatchObject({ failed: [], pending: [], timedOut: false });
    expect(started.succeeded.map((o) => o.status)).toEqual(["finished"]);
    expect((await api.getEndpoint(projectId, endpointId)).current_state).toBe("active");
    expect((await api.listEndpoints(projectId)).map((e) => e.id)).toContain(endpointId);

    const suspended = await api.suspendEndpoint(projectId, endpointId);
    expect(suspended.operations.map((o) => o.action)).toContain("suspend_compute");
    await wait(suspended.operations);
    expect((await api.getEndpoint(projectId, endpointId)).current_state).toBe("idle");

    const resumed = await api.startEndpoint(projectId, endpointId);
    expect(resumed.operations.map((o) => o.action)).toContain("start_compute");
    await wait(resumed.operations);
    expect((await api.getEndpoint(projectId, endpointId)).current_state).toBe("active");

    const restarted = await api.restartEndpoint(projectId, endpointId);
    expect(restarted.operations.length).toBeGreaterThan(0);
    expect((await wait(restarted.operations)).failed).toEqual([]);

    const updated = await api.updateEndpoint(projectId, endpointId, {
      suspend_timeout_seconds: 600,
    });
    expect(updated.endpoint.suspend_timeout_seconds).toBe(600);
    expect(updated.operations.map((o) => o.action)).toEqual(["apply_config"]);
    await wait(updated.operations);

    const deleted = await api.deleteEndpoint(projectId, endpointId);
    expect(deleted).toMatchObject({ endpoint: { id: endpointId }, operations: [] });
    // The real API answers 204 for an endpoint already gone; the client returns null.
    expect(await api.deleteEndpoint(projectId, endpointId)).toBeNull();
    expect((await api.listEndpoints(projectId)).map((e) => e.id)).not.toContain(endpointId);
  });

  it("reassigns an endpoint to another branch", async () => {
    const { projectId, branchIds } = await readyProject(t, "paid", 2);
    const [endpoint] = await c.api.listEndpoints(projectId);
    const target = branchIds[1] ?? "";
    const moved = await c.api.updateEndpoint(projectId, endpoint?.id ?? "", { branch_id: target });
    expect(moved.endpoint.branch_id).toBe(target);
    expect(moved.operations.map((o) => o.action)).toEqual(["apply_config", "suspend_compute"]);
  });
});

describe("refusals surface as ApiError", () => {
  it("409: a second read-write endpoint on a branch", async () => {
    const { projectId, branchIds } = await readyProject(t);
    const error = await apiErrorOf(
      c.api.createEndpoint(projectId, { branch_id: branchIds[0] ?? "", type: "read_write" }),
    );
    expect(error).toMatchObject({
      kind: "http",
      status: 409,
      code: "conflict",
      route: "createEndpoint",
      method: "POST",
      retryable: false,
      attempts: 1,
    });
    expect(error.requestId).toMatch(UUID);
    expect(error.message).toContain("createEndpoint: HTTP 409 [conflict]");
    expect(error.message).toContain(error.requestId);
    expectNoSecret(error, t.apiKey);
  });

  it("422: a read replica on the free plan", async () => {
    const { projectId, branchIds } = await readyProject(t, "free");
    const error = await apiErrorOf(
      c.api.createEndpoint(projectId, { branch_id: branchIds[0] ?? "", type: "read_only" }),
    );
    expect(error).toMatchObject({ status: 422, code: "plan_limit", retryable: false });
  });

  it("423: a change while an operation holds the endpoint, retried with one request id", async () => {
    const { projectId, branchIds } = await readyProject(t, "paid", 2);
    const created = await c.api.createEndpoint(projectId, {
      branch_id: branchIds[1] ?? "",
      type: "read_write",
    });
    const before = c.log.responses.length;
    const error = await apiErrorOf(c.api.suspendEndpoint(projectId, created.endpoint.id));
    expect(error).toMatchObject({ status: 423, code: "locked", retryable: true, attempts: 3 });
    const attempts = c.log.responses.slice(before).filter((e) => e.route === "suspendEndpoint");
    expect(attempts.map((e) => [e.attempt, e.status])).toEqual([
      [1, 423],
      [2, 423],
      [3, 423],
    ]);
    expect(new Set(attempts.map((e) => e.requestId))).toEqual(new Set([error.requestId]));
    // Once the start has finished, the same call goes through.
    await t.sim.advance(5);
    await c.api.suspendEndpoint(projectId, created.endpoint.id);
  });

  it("404: unknown project, endpoint and operation", async () => {
    const { projectId } = await readyProject(t);
    const errors = await Promise.all([
      apiErrorOf(c.api.listEndpoints("no-such-project")),
      apiErrorOf(c.api.getEndpoint(projectId, "ep-missing")),
      apiErrorOf(c.api.getOperation(projectId, "00000000-0000-4000-8000-000000000000")),
      apiErrorOf(c.api.listOperations("no-such-project", { limit: 5 })),
      apiErrorOf(c.api.deleteEndpoint("no-such-project", "ep-missing")),
    ]);
    expect(errors.map((e) => [e.route, e.status, e.code, e.retryable])).toEqual([
      ["listEndpoints", 404, "not_found", false],
      ["getEndpoint", 404, "not_found", false],
      ["getOperation", 404, "not_found", false],
      ["listOperations", 404, "not_found", false],
      ["deleteEndpoint", 404, "not_found", false],
    ]);
  });

  it("401: a wrong key, which appears in no error", async () => {
    const wrongKey = "napi_wrong_key_0123456789abcdef";
    const api = createApiClient({ apiKey: wrongKey, baseUrl: t.apiUrl });
    try {
      const error = await apiErrorOf(api.listProjects({ limit: 1 }));
      expect(error).toMatchObject({
        kind: "http",
        status: 401,
        code: "unauthorized",
        route: "listProjects",
        retryable: false,
        attempts: 1,
      });
      expectNoSecret(error, wrongKey);
    } finally {
      await api.close();
    }
  });

  it("rejects a limit outside the API's bounds before sending", async () => {
    const sent = c.log.responses.length;
    await expect(c.api.listOperations("p", { limit: 0 })).rejects.toThrow(RangeError);
    await expect(c.api.listOperations("p", { limit: 1001 })).rejects.toThrow(RangeError);
    await expect(c.api.listProjects({ limit: 401 })).rejects.toThrow(RangeError);
    expect(() => c.api.operationPages("p", { limit: 2.5 })).toThrow(RangeError);
    expect(c.log.responses.length).toBe(sent);
  });
});
