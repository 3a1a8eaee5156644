/** The endpoint calls and their rules (seed 2.4, 2.5, 3.2, 4.3-4.6, 8). */
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import {
  endpointCall,
  expectApiError,
  getEndpoint,
  listEndpoints,
  readyProject,
} from "./fixtures.js";
import { runsThen } from "../support/operation-steps.js";

let t: TestSimulator;

beforeEach(async () => {
  t = await startTestSimulator();
});

afterEach(async () => {
  await t.close();
});

const endpointsPath = (projectId: string): string => `/projects/${projectId}/endpoints`;
const endpointPath = (projectId: string, endpointId: string): string =>
  `/projects/${projectId}/endpoints/${endpointId}`;

const expectError = (
  method: string,
  path: string,
  status: number,
  code: string,
  body?: unknown,
): Promise<string> => expectApiError(t, method, path, status, code, body);

describe("create", () => {
  test("201 with the endpoint in init, pending active, and a running start_compute", async () => {
    const p = await readyProject(t, "paid", 2);
    const branchId = p.branchIds[1] ?? "";
    const created = await endpointCall(t, "POST", endpointsPath(p.projectId), 201, {
      endpoint: { branch_id: branchId, type: "read_write" },
    });
    expect(created.endpoint).toMatchObject({
      branch_id: branchId,
      type: "read_write",
      current_state: "init",
      pending_state: "active",
      autoscaling_limit_min_cu: 0.25,
      autoscaling_limit_max_cu: 0.25,
      suspend_timeout_seconds: 0,
      creation_source: "console",
      provisioner: "k8s-neonvm",
    });
    expect(created.endpoint.last_active).toBeUndefined();
    expect(created.operations).toHaveLength(1);
    expect(created.operations[0]).toMatchObject({
      action: "start_compute",
      status: "running",
      endpoint_id: created.endpoint.id,
      branch_id: branchId,
    });
    await t.sim.advance(2);
    const started = await getEndpoint(t, p.projectId, created.endpoint.id);
    expect(started.current_state).toBe("active");
    expect(started.pending_state).toBeUndefined();
    expect(started.last_active).toBeDefined();
    expect(started.started_at).toBe(started.last_active);
  });

  test("a branch has at most one read_write endpoint: 409", async () => {
    const p = await readyProject(t);
    await expectError("POST", endpointsPath(p.projectId), 409, "conflict", {
      endpoint: { branch_id: p.endpoint.branch_id, type: "read_write" },
    });
  });

  test("read replicas: several per branch on paid plans, 422 on the free plan", async () => {
    const paid = await readyProject(t, "paid");
    for (let i = 0; i < 2; i++) {
      const replica = await endpointCall(t, "POST", endpointsPath(paid.projectId), 201, {
        endpoint: { branch_id: paid.endpoint.branch_id, type: "read_only" },
      });
      expect(replica.endpoint.type).toBe("read_only");
    }
    expect(await listEndpoints(t, paid.projectId)).toHaveLength(3);
    const free = await readyProject(t, "free", 2);
    await expectError("POST", endpointsPath(free.projectId), 422, "plan_limit", {
      endpoint: { branch_id: free.endpoint.branch_id, type: "read_only" },
    });
  });

  test("sizes come from the table with min <= max; the free plan is fixed at 0.25 CU", async () => {
    const paid = await readyProject(t, "paid", 4);
    const sized = await endpointCall(t, "POST", endpointsPath(paid.projectId), 201, {
      endpoint: {
        branch_id: paid.branchIds[1],
        type: "read_write",
        autoscaling_limit_min_cu: 1,
        autoscaling_limit_max_cu: 4,
        suspend_timeout_seconds: 3600,
      },
    });
    expect(sized.endpoint).toMatchObject({
      autoscaling_limit_min_cu: 1,
      autoscaling_limit_max_cu: 4,
      suspend_timeout_seconds: 3600,
    });
    const branch = paid.branchIds[2];
    for (const sizes of [
      { autoscaling_limit_min_cu: 0.3 },
      { autoscaling_limit_max_cu: 9 },
      { autoscaling_limit_min_cu: 0.1 },
      { autoscaling_limit_min_cu: 4, autoscaling_limit_max_cu: 2 },
      { suspend_timeout_seconds: 604_801 },
      { suspend_timeout_seconds: -2 },
    ]) {
      await expectError("POST", endpointsPath(paid.projectId), 400, "bad_request", {
        endpoint: { branch_id: branch, type: "read_write", ...sizes },
      });
    }
    const free = await readyProject(t, "free", 2);
    for (const sizes of [
      { autoscaling_limit_max_cu: 1 },
      { autoscaling_limit_min_cu: 0.5, autoscaling_limit_max_cu: 0.5 },
      { suspend_timeout_seconds: 60 },
      { suspend_timeout_seconds: -1 },
    ]) {
      await expectError("POST", endpointsPath(free.projectId), 422, "plan_limit", {
        endpoint: { branch_id: free.branchIds[1], type: "read_write", ...sizes },
      });
    }
    const defaults = await endpointCall(t, "POST", endpointsPath(free.projectId), 201, {
      endpoint: { branch_id: free.branchIds[1], type: "read_write", suspend_timeout_seconds: 300 },
    });
    expect(defaults.endpoint.autoscaling_limit_max_cu).toBe(0.25);
  });

  test("malformed requests answer 400, unknown project or branch 404", async () => {
    const p = await readyProject(t, "paid", 2);
    for (const body of [
      "{oops",
      {},
      { endpoint: { branch_id: p.branchIds[1] } },
      { endpoint: { branch_id: p.branchIds[1], type: "read_mostly" } },
      { endpoint: { branch_id: "Not_An_Id", type: "read_write" } },
    ]) {
      await expectError("POST", endpointsPath(p.projectId), 400, "bad_request", body);
    }
    await expectError("POST", endpointsPath(p.projectId), 404, "not_found", {
      endpoint: { branch_id: "br-missing-000000", type: "read_write" },
    });
    await expectError("POST", endpointsPath("no-such-project"), 404, "not_found", {
      endpoint: { branch_id: p.branchIds[1], type: "read_write" },
    });
  });
});

describe("list and get", () => {
  test("list shows the project's endpoints; get one; unknown ones 404", async () => {
    const p = await readyProject(t);
    const other = await readyProject(t);
    expect((await listEndpoints(t, p.projectId)).map((e) => e.id)).toEqual([p.endpoint.id]);
    expect(await getEndpoint(t, p.projectId, p.endpoint.id)).toEqual(p.endpoint);
    await expectError("GET", endpointPath(p.projectId, "ep-missing-000000"), 404, "not_found");
    await expectError("GET", endpointPath(p.projectId, other.endpoint.id), 404, "not_found");
    await expectError("GET", endpointsPath("no-such-project"), 404, "not_found");
  });
});

describe("update", () => {
  test("branch reassignment: apply_config and suspend_compute, then idle", async () => {
    const p = await readyProject(t, "paid", 3);
    const target = p.branchIds[1] ?? "";
    const moved = await endpointCall(t, "PATCH", endpointPath(p.projectId, p.endpoint.id), 200, {
      endpoint: { branch_id: target },
    });
    expect(moved.endpoint).toMatchObject({ branch_id: target, pending_state: "idle" });
    expect(moved.operations.map((o) => [o.action, o.status, o.branch_id])).toEqual([
      ["apply_config", "running", target],
      ["suspend_compute", "scheduling", target],
    ]);
    await t.sim.advance(2);
    const after = await getEndpoint(t, p.projectId, p.endpoint.id);
    expect(after.current_state).toBe("idle");
    expect(after.pending_state).toBeUndefined();

    // An idle endpoint moves the same way (seed 3.2, last row).
    const again = await endpointCall(t, "PATCH", endpointPath(p.projectId, p.endpoint.id), 200, {
      endpoint: { branch_id: p.branchIds[2] },
    });
    expect(again.endpoint).toMatchObject({ current_state: "idle", pending_state: "idle" });
    expect(again.operations.map((o) => o.action)).toEqual(["apply_config", "suspend_compute"]);
  });

  test("reassignment needs a target branch with no endpoint (409) that exists (404)", async () => {
    const p = await readyProject(t, "paid", 2);
    const replica = await endpointCall(t, "POST", endpointsPath(p.projectId), 201, {
      endpoint: { branch_id: p.branchIds[1], type: "read_only" },
    });
    await t.sim.advance(3);
    await expectError("PATCH", endpointPath(p.projectId, p.endpoint.id), 409, "conflict", {
      endpoint: { branch_id: replica.endpoint.branch_id },
    });
    await expectError("PATCH", endpointPath(p.projectId, p.endpoint.id), 404, "not_found", {
      endpoint: { branch_id: "br-missing-000000" },
    });
  });

  test("a size change restarts a running compute: apply_config, suspend_compute, start_compute", async () => {
    const p = await readyProject(t);
    const resized = await endpointCall(t, "PATCH", endpointPath(p.projectId, p.endpoint.id), 200, {
      endpoint: { autoscaling_limit_min_cu: 1, autoscaling_limit_max_cu: 2 },
    });
    expect(resized.endpoint).toMatchObject({
      autoscaling_limit_min_cu: 1,
      autoscaling_limit_max_cu: 2,
      current_state: "active",
      pending_state: "active",
    });
    expect(resized.operations.map((o) => [o.action, o.status])).toEqual([
      ["apply_config", "running"],
      ["suspend_compute", "scheduling"],
      ["start_compute", "scheduling"],
    ]);
    await t.sim.advance(2);
    expect((await getEndpoint(t, p.projectId, p.endpoint.id)).current_state).toBe("idle");
    await t.sim.advance(2);
    const restarted = await getEndpoint(t, p.projectId, p.endpoint.id);
    expect(restarted.current_state).toBe("active");
    expect(restarted.pending_state).toBeUndefined();
    expect(Date.parse(restarted.started_at ?? "")).toBeGreaterThan(
      Date.parse(p.endpoint.started_at ?? ""),
    );
  });

  test("an auto-suspend change does not restart: apply_config alone", async () => {
    const p = await readyProject(t);
    const changed = await endpointCall(t, "PATCH", endpointPath(p.projectId, p.endpoint.id), 200, {
      endpoint: { suspend_timeout_seconds: 3600 },
    });
    expect(changed.operations.map((o) => o.action)).toEqual(["apply_config"]);
    expect(changed.endpoint).toMatchObject({
      current_state: "active",
      suspend_timeout_seconds: 3600,
    });
    expect(changed.endpoint.pending_state).toBeUndefined();
    await t.sim.advance(600);
    const truth = await t.sim.truth(p.projectId);
    const computeOps = truth.filter((o) => o.action.endsWith("_compute"));
    expect(computeOps).toHaveLength(1); // the start at creation only
    expect((await getEndpoint(t, p.projectId, p.endpoint.id)).started_at).toBe(
      p.endpoint.started_at,
    );
  });

  test("plan limits (422), bad sizes (400), and an empty change", async () => {
    const free = await readyProject(t, "free");
    await expectError("PATCH", endpointPath(free.projectId, free.endpoint.id), 422, "plan_limit", {
      endpoint: { autoscaling_limit_max_cu: 2 },
    });
    await expectError("PATCH", endpointPath(free.projectId, free.endpoint.id), 422, "plan_limit", {
      endpoint: { suspend_timeout_seconds: 1 },
    });
    const paid = await readyProject(t);
    await expectError("PATCH", endpointPath(paid.projectId, paid.endpoint.id), 400, "bad_request", {
      endpoint: { autoscaling_limit_min_cu: 2 },
    });
    await expectError("PATCH", endpointPath(paid.projectId, paid.endpoint.id), 400, "bad_request", {
      endpoint: { autoscaling_limit_max_cu: 7.5 },
    });
    const same = await endpointCall(
      t,
      "PATCH",
      endpointPath(paid.projectId, paid.endpoint.id),
      200,
      {
        endpoint: { autoscaling_limit_min_cu: 0.25 },
      },
    );
    expect(same.operations).toEqual([]);
  });
});

describe("delete", () => {
  test("permanent; answers the last known endpoint and no operations", async () => {
    const p = await readyProject(t);
    const deleted = await endpointCall(t, "DELETE", endpointPath(p.projectId, p.endpoint.id), 200);
    expect(deleted.operations).toEqual([]);
    expect(deleted.endpoint).toMatchObject({ id: p.endpoint.id, current_state: "active" });
    await expectError("GET", endpointPath(p.projectId, p.endpoint.id), 404, "not_found");
    expect(await listEndpoints(t, p.projectId)).toEqual([]);
    expect((await t.api("DELETE", endpointPath(p.projectId, p.endpoint.id))).status).toBe(204);
    await expectError(
      "POST",
      `${endpointPath(p.projectId, p.endpoint.id)}/start`,
      404,
      "not_found",
    );
    const connect = await t.request("POST", `/_sim/endpoints/${p.endpoint.id}/connect`);
    expect(connect.status).toBe(404);
    // Nothing happens to it any more: no auto-suspend after deletion.
    await t.sim.advance(1000);
    expect((await t.sim.truth(p.projectId)).some((o) => o.action === "suspend_compute")).toBe(
      false,
    );
    // The branch is free again.
    await endpointCall(t, "POST", endpointsPath(p.projectId), 201, {
      endpoint: { branch_id: p.endpoint.branch_id, type: "read_write" },
    });
  });
});

describe("423 Locked", () => {
  test("while the endpoint's own operation runs", async () => {
    const p = await readyProject(t, "paid", 2);
    const created = await endpointCall(t, "POST", endpointsPath(p.projectId), 201, {
      endpoint: { branch_id: p.branchIds[1], type: "read_write" },
    });
    const path = endpointPath(p.projectId, created.endpoint.id);
    await expectError("PATCH", path, 423, "locked", { endpoint: { suspend_timeout_seconds: 60 } });
    await expectError("POST", `${path}/suspend`, 423, "locked");
    await expectError("DELETE", path, 423, "locked");
    await t.sim.advance(2);
    await endpointCall(t, "PATCH", path, 200, { endpoint: { suspend_timeout_seconds: 60 } });
  });

  test("while any other open operation holds it, but not an availability check", async () => {
    const p = await readyProject(t);
    const path = endpointPath(p.projectId, p.endpoint.id);
    const hold = (action: string): Promise<unknown> =>
      t.sim.scriptOperation({
        project_id: p.projectId,
        branch_id: p.endpoint.branch_id,
        endpoint_id: p.endpoint.id,
        action,
        steps: runsThen("finished", 60),
      });
    await hold("check_availability");
    await endpointCall(t, "POST", `${path}/start`, 200);
    await hold("apply_config");
    await expectError("POST", `${path}/restart`, 423, "locked");
    await t.sim.advance(59);
    await expectError("POST", `${path}/restart`, 423, "locked");
    await t.sim.advance(1);
    await endpointCall(t, "POST", `${path}/restart`, 200);
  });
});

describe("start, suspend, restart", () => {
  test("suspend and start move the compute; doing either twice is skipped", async () => {
    const p = await readyProject(t);
    const path = endpointPath(p.projectId, p.endpoint.id);
    const suspended = await endpointCall(t, "POST", `${path}/suspend`, 200);
    expect(suspended.endpoint.pending_state).toBe("idle");
    expect(suspended.operations.map((o) => [o.action, o.status])).toEqual([
      ["suspend_compute", "running"],
    ]);
    await t.sim.advance(1);
    expect((await getEndpoint(t, p.projectId, p.endpoint.id)).current_state).toBe("idle");
    const again = await endpointCall(t, "POST", `${path}/suspend`, 200);
    expect(again.operations.map((o) => [o.action, o.status])).toEqual([
      ["suspend_compute", "skipped"],
    ]);

    const started = await endpointCall(t, "POST", `${path}/start`, 200);
    expect(started.endpoint).toMatchObject({ current_state: "idle", pending_state: "active" });
    expect(started.operations.map((o) => [o.action, o.status])).toEqual([
      ["start_compute", "running"],
    ]);
    await t.sim.advance(2);
    expect((await getEndpoint(t, p.projectId, p.endpoint.id)).current_state).toBe("active");
    const twice = await endpointCall(t, "POST", `${path}/start`, 200);
    expect(twice.operations.map((o) => [o.action, o.status])).toEqual([
      ["start_compute", "skipped"],
    ]);
  });

  test("restart suspends then starts a running compute, and just starts an idle one", async () => {
    const p = await readyProject(t);
    const path = endpointPath(p.projectId, p.endpoint.id);
    const restarted = await endpointCall(t, "POST", `${path}/restart`, 200);
    expect(restarted.operations.map((o) => [o.action, o.status])).toEqual([
      ["suspend_compute", "running"],
      ["start_compute", "scheduling"],
    ]);
    await t.sim.advance(3);
    expect((await getEndpoint(t, p.projectId, p.endpoint.id)).current_state).toBe("active");
    await endpointCall(t, "POST", `${path}/suspend`, 200);
    await t.sim.advance(1);
    const fromIdle = await endpointCall(t, "POST", `${path}/restart`, 200);
    expect(fromIdle.operations.map((o) => o.action)).toEqual(["start_compute"]);
  });
});

const SETTINGS = {
  name: "reporting",
  pooler_enabled: true,
  pooler_mode: "transaction",
  settings: { pg_settings: { work_mem: "64MB", statement_timeout: "30s" } },
  provisioner: "k8s-pod",
  passwordless_access: false,
} as const;

describe("stored fields beyond sizes and auto-suspend", () => {
  test("create stores every field and answers it; get answers the same", async () => {
    const p = await readyProject(t, "paid", 2);
    const created = await endpointCall(t, "POST", endpointsPath(p.projectId), 201, {
      endpoint: {
        branch_id: p.branchIds[1],
        type: "read_write",
        region_id: "aws-us-east-2",
        ...SETTINGS,
      },
    });
    expect(created.endpoint).toMatchObject({ ...SETTINGS, disabled: false });
    expect(await getEndpoint(t, p.projectId, created.endpoint.id)).toMatchObject(SETTINGS);
  });

  test("update: settings on a running compute apply_config alone; a name alone changes nothing else", async () => {
    const p = await readyProject(t);
    const path = `${endpointsPath(p.projectId)}/${p.endpoint.id}`;
    const renamed = await endpointCall(t, "PATCH", path, 200, { endpoint: { name: "primary" } });
    expect(renamed.operations).toEqual([]);
    expect(renamed.endpoint).toMatchObject({ name: "primary", current_state: "active" });
    const tuned = await endpointCall(t, "PATCH", path, 200, {
      endpoint: { settings: { pg_settings: { work_mem: "16MB" } }, pooler_enabled: true },
    });
    expect(tuned.operations.map((o) => o.action)).toEqual(["apply_config"]);
    expect(tuned.endpoint).toMatchObject({
      name: "primary",
      pooler_enabled: true,
      settings: { pg_settings: { work_mem: "16MB" } },
    });
    await t.sim.advance(1);
    const again = await endpointCall(t, "PATCH", path, 200, {
      endpoint: { settings: { pg_settings: { work_mem: "16MB" } }, pooler_enabled: true },
    });
    expect(again.operations).toEqual([]);
  });

  test("fields the API does not take answer 400 naming them", async () => {
    const p = await readyProject(t, "paid", 2);
    const base = endpointsPath(p.projectId);
    const create = { branch_id: p.branchIds[1], type: "read_write" };
    for (const [method, path, body, field] of [
      ["POST", base, { endpoint: { ...create, colour: "blue" } }, "colour"],
      ["POST", base, { endpoint: create, extra: true }, "extra"],
      ["POST", base, { endpoint: { ...create, settings: { pgbouncer: {} } } }, "pgbouncer"],
      ["POST", base, { endpoint: { ...create, pooler_mode: "session" } }, "pooler_mode"],
      ["POST", base, { endpoint: { ...create, provisioner: "bare-metal" } }, "provisioner"],
      ["POST", base, { endpoint: { ...create, name: "" } }, "name"],
      ["POST", base, { endpoint: { ...create, region_id: "aws-eu-central-1" } }, "region_id"],
      ["PATCH", `${base}/${p.endpoint.id}`, { endpoint: { type: "read_only" } }, "type"],
      ["PATCH", `${base}/${p.endpoint.id}`, { endpoint: { disabled: "yes" } }, "disabled"],
    ] as const) {
      expect(await expectError(method, path, 400, "bad_request", body)).toContain(field);
    }
  });
});

describe("disabled endpoints", () => {
  test("disabling a running compute suspends it; a disabled one is not started", async () => {
    const p = await readyProject(t);
    const path = `${endpointsPath(p.projectId)}/${p.endpoint.id}`;
    const disabled = await endpointCall(t, "PATCH", path, 200, { endpoint: { disabled: true } });
    expect(disabled.operations.map((o) => o.action)).toEqual(["apply_config", "suspend_compute"]);
    await t.sim.advance(3);
    expect(await getEndpoint(t, p.projectId, p.endpoint.id)).toMatchObject({
      disabled: true,
      current_state: "idle",
    });
    for (const action of ["start", "restart"]) {
      expect(await expectError("POST", `${path}/${action}`, 409, "conflict")).toContain("disabled");
    }
    const connect = await t.request("POST", `/_sim/endpoints/${p.endpoint.id}/connect`);
    expect(connect.status).toBe(409);
    const enabled = await endpointCall(t, "PATCH", path, 200, { endpoint: { disabled: false } });
    expect(enabled.endpoint.disabled).toBe(false);
    await t.sim.advance(3);
    const started = await endpointCall(t, "POST", `${path}/start`, 200);
    expect(started.operations.map((o) => o.action)).toEqual(["start_compute"]);
  });

  test("an endpoint created disabled starts idle with no operation", async () => {
    const p = await readyProject(t, "paid", 2);
    const created = await endpointCall(t, "POST", endpointsPath(p.projectId), 201, {
      endpoint: { branch_id: p.branchIds[1], type: "read_write", disabled: true },
    });
    expect(created.operations).toEqual([]);
    expect(created.endpoint).toMatchObject({ disabled: true, current_state: "idle" });
    expect(created.endpoint.pending_state).toBeUndefined();
  });
});
