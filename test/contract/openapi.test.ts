/**
 * The simulator's responses validated against the real API's published OpenAPI document
 * (`public-v2-for-users.gen.yaml` from `@neondatabase/api-client`): every operation and
 * endpoint shape it sends, from every call that returns one. Where the seed specification and
 * the real API differ, the difference is listed in SEED_DIFFERENCES and nowhere else.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { Ajv, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { createApiClient, EndpointPoolerMode, EndpointType } from "@neondatabase/api-client";
import { DEFAULT_USER_ID } from "../../src/simulator/index.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";

/** What the seed says differently from the real API; accepted on top of the real schema. */
const SEED_DIFFERENCES = {
  /** The seed names the cancelling state `cancellation_pending`; the real API `cancelling`. */
  OperationStatus: ["cancellation_pending"],
  /** The seed lists `delete_tenant`, which the real enum does not (yet) contain. */
  OperationAction: ["delete_tenant"],
} as const;

const DOC_ID = "https://pgcp-exporter.test/openapi.json";

/** The parts (`allOf`) of the real API's composed responses. */
const CREATED_PROJECT = [
  "ProjectResponse",
  "ConnectionURIsResponse",
  "RolesResponse",
  "DatabasesResponse",
  "OperationsResponse",
  "BranchResponse",
  "EndpointsResponse",
];
const CREATED_BRANCH = [
  "BranchResponse",
  "EndpointsResponse",
  "OperationsResponse",
  "RolesResponse",
  "DatabasesResponse",
  "ConnectionURIsOptionalResponse",
];
const PROJECTS_PAGE = [
  "ProjectsResponse",
  "PaginationResponse",
  "ProjectsApplicationsMapResponse",
  "ProjectsIntegrationsMapResponse",
];

type Schema = Record<string, unknown>;
let ajv: Ajv;
let t: TestSimulator;

async function loadDocument(): Promise<{ components: { schemas: Record<string, Schema> } }> {
  const require = createRequire(import.meta.url);
  const file = require.resolve("@neondatabase/api-client/public-v2-for-users.gen.yaml");
  return parse(await readFile(file, "utf8")) as { components: { schemas: Record<string, Schema> } };
}

function validator(name: string): ValidateFunction {
  const validate = ajv.getSchema(`${DOC_ID}#/components/schemas/${name}`);
  if (validate === undefined) throw new Error(`no schema ${name} in the OpenAPI document`);
  return validate;
}

function expectValid(name: string, value: unknown): void {
  const validate = validator(name);
  const ok = validate(value);
  expect(ok, `${name}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value)}`).toBe(true);
}

beforeAll(async () => {
  const document = await loadDocument();
  for (const [name, extra] of Object.entries(SEED_DIFFERENCES)) {
    const schema = document.components.schemas[name];
    if (!Array.isArray(schema?.enum)) throw new Error(`${name} is no longer an enum`);
    schema.enum = [...(schema.enum as string[]), ...extra];
  }
  ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  const addFormats = addFormatsModule as unknown as (a: Ajv) => Ajv;
  addFormats(ajv);
  ajv.addFormat("int32", {
    type: "number",
    validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 31,
  });
  ajv.addFormat("int64", { type: "number", validate: (n: number) => Number.isInteger(n) });
  ajv.addSchema({ ...document, $id: DOC_ID });
  t = await startTestSimulator();
});

afterAll(async () => {
  await t.close();
});

describe("simulator responses against the real API's OpenAPI document", () => {
  it("lists the seed's differences only where the real schema lacks them", async () => {
    const document = await loadDocument();
    const real = (name: string) => document.components.schemas[name]?.enum as string[];
    for (const [name, extra] of Object.entries(SEED_DIFFERENCES)) {
      for (const value of extra) expect(real(name)).not.toContain(value);
    }
  });

  it("rejects what the real schema forbids (the validator bites)", () => {
    const op = {
      id: "d8ac46eb-a757-42b1-9907-f78322ee394e",
      project_id: "spring-example-302709",
      branch_id: "br-wispy-meadow-118737",
      action: "start_compute",
      status: "finished",
      failures_count: 0,
      created_at: "2022-11-15T20:02:00Z",
      updated_at: "2022-11-15T20:02:02Z",
      total_duration_ms: 200,
    };
    expect(validator("Operation")(op)).toBe(true);
    const { total_duration_ms: _, ...withoutDuration } = op;
    expect(validator("Operation")(withoutDuration)).toBe(false);
    expect(validator("Operation")({ ...op, status: "exploded" })).toBe(false);
    expect(validator("Operation")({ ...op, created_at: "yesterday" })).toBe(false);
  });

  it("operations of every status and of every seed action match the Operation schema", async () => {
    const created = await t.sim.createProject({ plan: "paid", branches: 3 });
    const projectId = created.project.id;
    const branchId = created.branches[0]!.id;
    const endpoint = (
      await t.api<{ endpoints: { id: string }[] }>("GET", `/projects/${projectId}/endpoints`)
    ).body.endpoints[0]!;
    const paths: { action: string; statuses: string[] }[] = [
      { action: "apply_config", statuses: ["scheduling", "running", "finished"] },
      { action: "apply_storage_config", statuses: ["running", "failed", "running", "finished"] },
      { action: "check_availability", statuses: ["running", "error"] },
      { action: "delete_tenant", statuses: ["running", "cancellation_pending", "cancelled"] },
      { action: "start_compute", statuses: ["scheduling", "skipped"] },
      { action: "suspend_compute", statuses: ["running", "failed"] },
    ];
    for (const p of paths) {
      await t.sim.scriptOperation({
        project_id: projectId,
        branch_id: branchId,
        ...(p.action.endsWith("_compute") ? { endpoint_id: endpoint.id } : {}),
        action: p.action,
        steps: p.statuses.map((status, i) => ({
          status,
          after_seconds: i * 2,
          ...(status === "failed" || status === "error" ? { error: "simulated failure" } : {}),
        })),
      });
    }
    // Read every record at every step of its path.
    const seen = new Set<string>();
    for (let step = 0; step < 5; step++) {
      const page = await t.api<{ operations: { id: string; status: string }[] }>(
        "GET",
        `/projects/${projectId}/operations?limit=100`,
      );
      expect(page.status).toBe(200);
      for (const op of page.body.operations) {
        expectValid("Operation", op);
        seen.add(op.status);
        const single = await t.api<{ operation: unknown }>(
          "GET",
          `/projects/${projectId}/operations/${op.id}`,
        );
        expectValid("OperationResponse", single.body);
      }
      await t.sim.advance(2);
    }
    for (const status of [
      "scheduling",
      "running",
      "finished",
      "failed",
      "error",
      "cancelled",
      "skipped",
      "cancellation_pending",
    ]) {
      expect(seen).toContain(status);
    }
  });

  it("endpoints from every endpoint call match the Endpoint schema", async () => {
    const created = await t.sim.createProject({ plan: "paid", branches: 3 });
    const projectId = created.project.id;
    const [, second, third] = created.branches;
    await t.sim.advance(5);
    const base = `/projects/${projectId}/endpoints`;

    const list = await t.api<{ endpoints: { id: string }[] }>("GET", base);
    for (const e of list.body.endpoints) expectValid("Endpoint", e);
    const primary = list.body.endpoints[0]!.id;

    const responses: { status: number; body: unknown }[] = [];
    const record = async (method: string, path: string, body?: unknown) => {
      const r = await t.api(method, path, body === undefined ? {} : { body });
      responses.push({ status: r.status, body: r.body });
      await t.sim.advance(10);
      return r;
    };
    await record("POST", base, { endpoint: { branch_id: second!.id, type: "read_write" } });
    const replica = await record("POST", base, {
      endpoint: { branch_id: second!.id, type: "read_only" },
    });
    const replicaId = (replica.body as { endpoint: { id: string } }).endpoint.id;
    await record("PATCH", `${base}/${primary}`, {
      endpoint: { autoscaling_limit_min_cu: 0.5, autoscaling_limit_max_cu: 2 },
    });
    await record("PATCH", `${base}/${primary}`, { endpoint: { suspend_timeout_seconds: -1 } });
    await record("POST", `${base}/${primary}/suspend`);
    await record("POST", `${base}/${primary}/start`);
    await record("POST", `${base}/${primary}/restart`);
    await record("PATCH", `${base}/${replicaId}`, { endpoint: { branch_id: third!.id } });
    await record("DELETE", `${base}/${replicaId}`);

    for (const r of responses) {
      expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
      expectValid("EndpointOperations", r.body);
    }
    const after = await t.api<{ endpoints: unknown[] }>("GET", base);
    for (const e of after.body.endpoints) expectValid("Endpoint", e);
  });

  it("project list entries and error bodies match their schemas", async () => {
    const projects = await t.api<{ projects: unknown[] }>("GET", "/projects?limit=5");
    expect(projects.body.projects.length).toBeGreaterThan(0);
    for (const p of projects.body.projects) expectValid("ProjectListItem", p);
    const missing = await t.api("GET", "/projects/no-such-project/operations?limit=1");
    expect(missing.status).toBe(404);
    expectValid("GeneralError", missing.body);
  });
});

/**
 * The pooler fields, deprecated in the real API (sunset 2026-06-20) but still accepted; the
 * simulator stores them as the rest.
 */
const POOLER_FIELDS = {
  pooler_enabled: true,
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- still accepted, still stored
  pooler_mode: EndpointPoolerMode.Transaction,
};

/** A body that must satisfy every part of an `allOf` response: each named schema. */
function expectValidAll(names: readonly string[], value: unknown): void {
  for (const name of names) expectValid(name, value);
}

describe("the official SDK as a client of the simulator", () => {
  it("lists, creates, reads and deletes projects, branches, endpoints and operations", async () => {
    const org = await t.sim.createOrganization({ name: "SDK", members: [DEFAULT_USER_ID] });
    const api = createApiClient({ apiKey: t.apiKey, baseURL: t.apiUrl });

    const created = (await api.createProject({ project: { name: "sdk-project" } })).data;
    expectValidAll(CREATED_PROJECT, created);
    const projectId = created.project.id;
    const inOrg = (await api.createProject({ project: { org_id: org.id } })).data;
    expectValidAll(CREATED_PROJECT, inOrg);
    expect(inOrg.project.org_id).toBe(org.id);

    // Personal projects, one per page, by cursor; then the organisation's.
    const personal: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = (
        await api.listProjects({ limit: 1, ...(cursor === undefined ? {} : { cursor }) })
      ).data;
      expectValidAll(PROJECTS_PAGE, page);
      personal.push(...page.projects.map((p) => p.id));
      if (page.projects.length < 1) break;
      cursor = page.pagination?.cursor;
    }
    expect(personal).toContain(projectId);
    expect(personal).not.toContain(inOrg.project.id);
    const orgPage = (await api.listProjects({ org_id: org.id })).data;
    expectValidAll(PROJECTS_PAGE, orgPage);
    expect(orgPage.projects.map((p) => [p.id, p.org_id])).toEqual([[inOrg.project.id, org.id]]);

    expectValid("ProjectResponse", (await api.getProject(projectId)).data);
    await t.sim.advance(5);

    const branch = (
      await api.createProjectBranch(projectId, {
        branch: { name: "ci-branch" },
        endpoints: [{ type: EndpointType.ReadWrite, autoscaling_limit_max_cu: 1 }],
      })
    ).data;
    expectValidAll(CREATED_BRANCH, branch);
    const bare = (await api.createProjectBranch(projectId)).data;
    expectValidAll(CREATED_BRANCH, bare);
    const branches = (await api.listProjectBranches({ projectId })).data;
    expectValidAll(["BranchesResponse", "AnnotationsMapResponse"], branches);
    expect(branches.branches).toHaveLength(3);
    expectValid("BranchResponse", (await api.getProjectBranch(projectId, branch.branch.id)).data);
    await t.sim.advance(5);
    const onBranch = (await api.listProjectBranchEndpoints(projectId, branch.branch.id)).data;
    expectValid("EndpointsResponse", onBranch);
    expect(onBranch.endpoints.map((e) => e.current_state)).toEqual(["active"]);

    const endpoint = (
      await api.createProjectEndpoint(projectId, {
        endpoint: {
          branch_id: bare.branch.id,
          type: EndpointType.ReadWrite,
          name: "sdk-endpoint",
          ...POOLER_FIELDS,
          settings: { pg_settings: { work_mem: "8MB" } },
          suspend_timeout_seconds: 600,
          provisioner: "k8s-neonvm",
        },
      })
    ).data;
    expectValid("EndpointOperations", endpoint);
    expect(endpoint.endpoint).toMatchObject({ name: "sdk-endpoint", pooler_enabled: true });
    await t.sim.advance(5);
    const updated = (
      await api.updateProjectEndpoint(projectId, endpoint.endpoint.id, {
        endpoint: {
          name: "renamed",
          settings: { pg_settings: { work_mem: "16MB" } },
          disabled: false,
        },
      })
    ).data;
    expectValid("EndpointOperations", updated);
    expect(updated.endpoint.settings.pg_settings).toEqual({ work_mem: "16MB" });

    const operations = (await api.listProjectOperations({ projectId, limit: 3 })).data;
    expectValidAll(["OperationsResponse", "PaginationResponse"], operations);
    const next = (
      await api.listProjectOperations({
        projectId,
        limit: 3,
        cursor: operations.pagination?.cursor ?? "",
      })
    ).data;
    expectValidAll(["OperationsResponse", "PaginationResponse"], next);
    expect(next.operations.map((o) => o.id)).not.toContain(operations.operations[0]?.id);
    const one = (await api.getProjectOperation(projectId, operations.operations[0]?.id ?? "")).data;
    expectValid("OperationResponse", one);

    await t.sim.advance(5);
    const deletedBranch = (await api.deleteProjectBranch({ projectId, branchId: branch.branch.id }))
      .data;
    expectValid("BranchOperations", deletedBranch);
    const deleted = (await api.deleteProject(projectId)).data;
    expectValid("ProjectResponse", deleted);
    const after = (await api.listProjects({ limit: 400 })).data;
    expect(after.projects.map((p) => p.id)).not.toContain(projectId);
  });
});
