/** Projects (get, create, delete) and branches (list, create, get, delete, their endpoints). */
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import type { Endpoint, Operation } from "../../src/contract/index.js";
import { DEFAULT_USER_ID } from "../../src/simulator/index.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { expectApiError, expectStatus } from "./fixtures.js";

let t: TestSimulator;

beforeEach(async () => {
  t = await startTestSimulator();
});

afterEach(async () => {
  await t.close();
});

interface BranchBody {
  readonly id: string;
  readonly name: string;
  readonly parent_id?: string;
  readonly current_state: string;
  readonly default: boolean;
}

interface CreatedProject {
  readonly project: { id: string; name: string; org_id?: string; owner_id: string };
  readonly branch: BranchBody;
  readonly endpoints: Endpoint[];
  readonly operations: Operation[];
  readonly roles: { name: string }[];
  readonly databases: { name: string; owner_name: string }[];
  readonly connection_uris: { connection_uri: string }[];
}

interface CreatedBranch {
  readonly branch: BranchBody;
  readonly endpoints: Endpoint[];
  readonly operations: Operation[];
}

async function createProject(body: unknown = { project: {} }): Promise<CreatedProject> {
  return expectStatus(await t.api<CreatedProject>("POST", "/projects", { body }), 201);
}

async function createBranch(projectId: string, body?: unknown): Promise<CreatedBranch> {
  const result = await t.api<CreatedBranch>(
    "POST",
    `/projects/${projectId}/branches`,
    body === undefined ? {} : { body },
  );
  return expectStatus(result, 201);
}

const actions = (ops: readonly Operation[]): string[] => ops.map((o) => `${o.action} ${o.status}`);

describe("projects", () => {
  test("create: primary branch, read_write endpoint, create_timeline then start_compute", async () => {
    const created = await createProject({
      project: {
        name: "ci-run-17",
        pg_version: 16,
        branch: { name: "trunk", database_name: "app" },
      },
    });
    expect(created.project).toMatchObject({ name: "ci-run-17", owner_id: DEFAULT_USER_ID });
    expect(created.project.org_id).toBeUndefined();
    expect(created.branch).toMatchObject({ name: "trunk", current_state: "init", default: true });
    expect(created.endpoints).toHaveLength(1);
    expect(created.endpoints[0]).toMatchObject({ type: "read_write", current_state: "init" });
    expect(actions(created.operations)).toEqual([
      "create_timeline running",
      "start_compute scheduling",
    ]);
    expect(created.roles.map((r) => r.name)).toEqual(["app_owner"]);
    expect(created.databases).toEqual([
      expect.objectContaining({ name: "app", owner_name: "app_owner" }),
    ]);
    expect(created.connection_uris[0]?.connection_uri).toContain(created.endpoints[0]?.host);

    const id = created.project.id;
    expect((await t.projectIds()).includes(id)).toBe(true);
    await t.sim.advance(4);
    const got = expectStatus(
      await t.api<{ project: { id: string; pg_version: number } }>("GET", `/projects/${id}`),
      200,
    );
    expect(got.project).toMatchObject({ id, pg_version: 16 });
    const branch = expectStatus(
      await t.api<{ branch: BranchBody }>("GET", `/projects/${id}/branches/${created.branch.id}`),
      200,
    );
    expect(branch.branch.current_state).toBe("ready");
    const endpoints = expectStatus(
      await t.api<{ endpoints: Endpoint[] }>("GET", `/projects/${id}/endpoints`),
      200,
    );
    expect(endpoints.endpoints[0]?.current_state).toBe("active");
  });

  test("create in an organisation: org_id in the body or the query; the user must be a member", async () => {
    const org = await t.sim.createOrganization({ name: "CI", members: [DEFAULT_USER_ID] });
    const other = await t.sim.createOrganization({ name: "Other" });
    const inBody = await createProject({ project: { org_id: org.id } });
    expect(inBody.project.org_id).toBe(org.id);
    const inQuery = expectStatus(
      await t.api<CreatedProject>("POST", `/projects?org_id=${org.id}`, { body: { project: {} } }),
      201,
    );
    expect(inQuery.project.org_id).toBe(org.id);
    await expectApiError(t, "POST", "/projects", 404, "not_found", {
      project: { org_id: other.id },
    });
    await expectApiError(t, "POST", `/projects?org_id=${org.id}`, 400, "bad_request", {
      project: { org_id: other.id },
    });
    await t.sim.createApiKey({ key: "ci-org-key", org: org.id });
    const byOrgKey = expectStatus(
      await t.api<CreatedProject>("POST", "/projects", {
        body: { project: {} },
        apiKey: "ci-org-key",
      }),
      201,
    );
    expect(byOrgKey.project.org_id).toBe(org.id);
    const listed = await t.api<{ projects: { id: string }[] }>("GET", "/projects", {
      apiKey: "ci-org-key",
    });
    expect(listed.body.projects.map((p) => p.id)).toEqual(
      [inBody, inQuery, byOrgKey].map((c) => c.project.id),
    );
  });

  test("create refuses fields it does not take, unknown regions and bad values (400)", async () => {
    for (const [body, text] of [
      [{ project: { colour: "blue" } }, "colour"],
      [{ project: {}, extra: 1 }, "extra"],
      [{ project: { region_id: "aws-mars-north-1" } }, "region_id"],
      [{ project: { pg_version: 13 } }, "pg_version"],
      [{ project: { branch: { parent: "x" } } }, "parent"],
      [{}, "project"],
    ] as const) {
      expect(await expectApiError(t, "POST", "/projects", 400, "bad_request", body)).toContain(
        text,
      );
    }
  });

  test("delete: 200 with the project, a delete_tenant, then 404 and no longer listed", async () => {
    const created = await createProject();
    const id = created.project.id;
    await t.sim.advance(5);
    const deleted = expectStatus(
      await t.api<{ project: { id: string } }>("DELETE", `/projects/${id}`),
      200,
    );
    expect(deleted.project.id).toBe(id);
    expect((await t.projectIds()).includes(id)).toBe(false);
    for (const path of [
      `/projects/${id}`,
      `/projects/${id}/operations`,
      `/projects/${id}/endpoints`,
    ]) {
      await expectApiError(t, "GET", path, 404, "not_found");
    }
    await expectApiError(t, "DELETE", `/projects/${id}`, 404, "not_found");
    await t.sim.advance(3);
    const truth = await t.sim.truth(id);
    expect(truth[0]).toMatchObject({ action: "delete_tenant", status: "finished" });
    // Its endpoints went with it: nothing more happens to them.
    await t.sim.advance(3600);
    expect((await t.sim.truth(id)).length).toBe(truth.length);
  });
});

describe("branches", () => {
  test("create with an endpoint: create_branch running, start_compute scheduling until it ends", async () => {
    const p = await createProject();
    const id = p.project.id;
    await t.sim.advance(5);
    const created = await createBranch(id, {
      branch: { name: "preview-42" },
      endpoints: [
        {
          type: "read_write",
          autoscaling_limit_max_cu: 2,
          settings: { pg_settings: { work_mem: "8MB" } },
        },
      ],
    });
    expect(created.branch).toMatchObject({
      name: "preview-42",
      parent_id: p.branch.id,
      current_state: "init",
      default: false,
    });
    expect(actions(created.operations)).toEqual([
      "create_branch running",
      "start_compute scheduling",
    ]);
    expect(created.operations[0]?.endpoint_id).toBeUndefined();
    expect(created.endpoints[0]).toMatchObject({
      branch_id: created.branch.id,
      autoscaling_limit_max_cu: 2,
      settings: { pg_settings: { work_mem: "8MB" } },
      pending_state: "active",
    });
    await t.sim.advance(1);
    const got = expectStatus(
      await t.api<{ branch: BranchBody }>("GET", `/projects/${id}/branches/${created.branch.id}`),
      200,
    );
    expect(got.branch.current_state).toBe("ready");
    await t.sim.advance(2);
    const onBranch = expectStatus(
      await t.api<{ endpoints: Endpoint[] }>(
        "GET",
        `/projects/${id}/branches/${created.branch.id}/endpoints`,
      ),
      200,
    );
    expect(onBranch.endpoints.map((e) => [e.id, e.current_state])).toEqual([
      [created.endpoints[0]?.id, "active"],
    ]);
  });

  test("create without a body: a branch of the default one, no endpoint; list in creation order", async () => {
    const p = await createProject();
    const id = p.project.id;
    const plain = await createBranch(id);
    expect(plain.endpoints).toEqual([]);
    expect(actions(plain.operations)).toEqual(["create_branch running"]);
    expect(plain.branch.name).toBe(plain.branch.id);
    const child = await createBranch(id, { branch: { parent_id: plain.branch.id } });
    expect(child.branch.parent_id).toBe(plain.branch.id);
    const listed = expectStatus(
      await t.api<{ branches: BranchBody[] }>("GET", `/projects/${id}/branches`),
      200,
    );
    expect(listed.branches.map((b) => b.id)).toEqual([
      p.branch.id,
      plain.branch.id,
      child.branch.id,
    ]);
    const noEndpoints = await t.api<{ endpoints: unknown[] }>(
      "GET",
      `/projects/${id}/branches/${plain.branch.id}/endpoints`,
    );
    expect(noEndpoints.body.endpoints).toEqual([]);
  });

  test("create refuses unknown parents (404), extra fields and more than one endpoint (400)", async () => {
    const id = (await createProject()).project.id;
    const path = `/projects/${id}/branches`;
    await expectApiError(t, "POST", path, 404, "not_found", {
      branch: { parent_id: "br-none-000000" },
    });
    for (const [body, text] of [
      [{ branch: { protected: true } }, "protected"],
      [{ endpoints: [{ type: "read_write", name: "x" }] }, "name"],
      [{ endpoints: [{ type: "read_write" }, { type: "read_only" }] }, "endpoints"],
      [
        { endpoints: [{ type: "read_write", autoscaling_limit_min_cu: 0.3 }] },
        "autoscaling_limit_min_cu",
      ],
    ] as const) {
      expect(await expectApiError(t, "POST", path, 400, "bad_request", body)).toContain(text);
    }
  });

  test("delete: its endpoints go, a delete_timeline runs; 204 again; the default branch stays", async () => {
    const p = await createProject();
    const id = p.project.id;
    const created = await createBranch(id, { endpoints: [{ type: "read_write" }] });
    const branchPath = `/projects/${id}/branches/${created.branch.id}`;
    // An endpoint held by an operation (its start) makes the deletion wait.
    await expectApiError(t, "DELETE", branchPath, 423, "locked");
    await t.sim.advance(5);
    const child = await createBranch(id, { branch: { parent_id: created.branch.id } });
    expect(await expectApiError(t, "DELETE", branchPath, 422, "unprocessable_entity")).toContain(
      "child",
    );
    await t.sim.advance(1);
    expectStatus(await t.api("DELETE", `/projects/${id}/branches/${child.branch.id}`), 200);
    const deleted = expectStatus(
      await t.api<{ branch: BranchBody; operations: Operation[] }>("DELETE", branchPath),
      200,
    );
    expect(deleted.branch.id).toBe(created.branch.id);
    expect(actions(deleted.operations)).toEqual(["delete_timeline running"]);
    expect((await t.api("DELETE", branchPath)).status).toBe(204);
    await expectApiError(t, "GET", branchPath, 404, "not_found");
    await expectApiError(t, "GET", `${branchPath}/endpoints`, 404, "not_found");
    await expectApiError(
      t,
      "GET",
      `/projects/${id}/endpoints/${created.endpoints[0]?.id ?? ""}`,
      404,
      "not_found",
    );
    const listed = await t.api<{ branches: BranchBody[] }>("GET", `/projects/${id}/branches`);
    expect(listed.body.branches.map((b) => b.id)).toEqual([p.branch.id]);
    const primary = await expectApiError(
      t,
      "DELETE",
      `/projects/${id}/branches/${p.branch.id}`,
      422,
      "unprocessable_entity",
    );
    expect(primary).toContain("default branch");
  });
});
