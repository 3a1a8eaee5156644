/**
 * Regions: a project is created in one (`/_sim/projects`, `POST /projects`, `/_sim/bulk`; the
 * default when none is named), its views and its endpoints show it, and an unknown one is a
 * 400 naming the regions the simulator serves.
 */
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { errorBodySchema, type Endpoint } from "../../src/contract/index.js";
import { DEFAULT_REGION_ID, REGION_IDS } from "../../src/simulator/index.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { endpointCall, expectApiError, expectStatus, listEndpoints } from "./fixtures.js";

let t: TestSimulator;

beforeEach(async () => {
  t = await startTestSimulator();
});

afterEach(async () => {
  await t.close();
});

interface ProjectEntry {
  readonly id: string;
  readonly region_id: string;
  readonly platform_id: string;
  readonly proxy_host: string;
}

/** The proxy host the simulator gives a region: `aws-eu-central-1` → `eu-central-1.aws.…`. */
function proxyHostOf(regionId: string): string {
  const [platform, ...rest] = regionId.split("-");
  return `${rest.join("-")}.${platform ?? ""}.pgcp-sim.invalid`;
}

async function listed(): Promise<ProjectEntry[]> {
  return expectStatus(await t.api<{ projects: ProjectEntry[] }>("GET", "/projects?limit=400"), 200)
    .projects;
}

async function getProject(id: string): Promise<ProjectEntry> {
  return expectStatus(await t.api<{ project: ProjectEntry }>("GET", `/projects/${id}`), 200)
    .project;
}

/** A project's views and its endpoints all show `regionId`. */
async function expectInRegion(projectId: string, regionId: string): Promise<Endpoint[]> {
  const proxyHost = proxyHostOf(regionId);
  const inRegion = { region_id: regionId, platform_id: "aws", proxy_host: proxyHost };
  expect((await listed()).find((p) => p.id === projectId)).toMatchObject(inRegion);
  expect(await getProject(projectId)).toMatchObject(inRegion);
  const endpoints = await listEndpoints(t, projectId);
  expect(endpoints.length).toBeGreaterThan(0);
  for (const endpoint of endpoints) {
    expect(endpoint).toMatchObject({ region_id: regionId, proxy_host: proxyHost });
    expect(endpoint.host).toBe(`${endpoint.id}.${proxyHost}`);
  }
  return endpoints;
}

describe("the regions served", () => {
  test("a small fixed set named like the real API's, the default first", () => {
    expect(DEFAULT_REGION_ID).toBe("aws-us-east-2");
    expect(REGION_IDS[0]).toBe(DEFAULT_REGION_ID);
    expect(REGION_IDS).toEqual(
      expect.arrayContaining(["aws-us-east-1", "aws-us-west-2", "aws-eu-central-1"]),
    );
    for (const id of REGION_IDS) expect(id).toMatch(/^aws-[a-z]+-[a-z]+-\d$/);
  });
});

describe("/_sim/projects", () => {
  test("a project created in a region shows it in its views and its endpoints", async () => {
    const created = await t.sim.createProject({ region_id: "aws-eu-central-1", branches: 2 });
    expect(created.project.region_id).toBe("aws-eu-central-1");
    expect(created.endpoints).toEqual([
      { id: expect.any(String) as string, branch_id: created.branches[0]?.id },
    ]);
    const endpoints = await expectInRegion(created.project.id, "aws-eu-central-1");
    expect(endpoints.map((e) => e.id)).toEqual(created.endpoints.map((e) => e.id));
    // An endpoint created later is in the project's region too; naming it is allowed.
    const base = `/projects/${created.project.id}/endpoints`;
    const added = await endpointCall(t, "POST", base, 201, {
      endpoint: { branch_id: created.branches[1]?.id, type: "read_write" },
    });
    expect(added.endpoint.region_id).toBe("aws-eu-central-1");
    await expectInRegion(created.project.id, "aws-eu-central-1");
    await t.sim.advance(5);
    const named = await endpointCall(t, "POST", base, 201, {
      endpoint: {
        branch_id: created.branches[1]?.id,
        type: "read_only",
        region_id: "aws-eu-central-1",
      },
    });
    expect(named.endpoint.region_id).toBe("aws-eu-central-1");
  });

  test("without region_id: the default region, as before", async () => {
    const created = await t.sim.createProject();
    expect(created.project.region_id).toBe(DEFAULT_REGION_ID);
    await expectInRegion(created.project.id, DEFAULT_REGION_ID);
  });

  test("an unknown region is a 400 naming the regions served; nothing is created", async () => {
    const result = await t.request("POST", "/_sim/projects", {
      body: { plan: "paid", region_id: "aws-mars-north-1" },
    });
    expect(result.status).toBe(400);
    const message = errorBodySchema.parse(result.body).message;
    expect(message).toContain("region_id");
    expect(message).toContain("aws-mars-north-1");
    for (const id of REGION_IDS) expect(message).toContain(id);
    expect(await t.projectIds()).toEqual([]);
  });
});

describe("POST /projects", () => {
  test("region_id places the project, its endpoint and its connection URI", async () => {
    const created = expectStatus(
      await t.api<{
        project: ProjectEntry;
        endpoints: Endpoint[];
        connection_uris: { connection_parameters: { host: string; pooler_host: string } }[];
      }>("POST", "/projects", { body: { project: { region_id: "aws-us-west-2" } } }),
      201,
    );
    const proxyHost = proxyHostOf("aws-us-west-2");
    expect(created.project).toMatchObject({ region_id: "aws-us-west-2", proxy_host: proxyHost });
    const [endpoint] = created.endpoints;
    expect(endpoint).toMatchObject({
      region_id: "aws-us-west-2",
      host: `${endpoint?.id}.${proxyHost}`,
    });
    expect(created.connection_uris[0]?.connection_parameters).toEqual(
      expect.objectContaining({
        host: `${endpoint?.id}.${proxyHost}`,
        pooler_host: `${endpoint?.id}-pooler.${proxyHost}`,
      }),
    );
    await expectInRegion(created.project.id, "aws-us-west-2");
  });

  test("an unknown region is a 400 naming the regions served", async () => {
    const message = await expectApiError(t, "POST", "/projects", 400, "bad_request", {
      project: { region_id: "gcp-europe-west1" },
    });
    expect(message).toMatch(/^region_id: unknown region gcp-europe-west1/);
    for (const id of REGION_IDS) expect(message).toContain(id);
    expect(await t.projectIds()).toEqual([]);
  });

  test("an endpoint in another region than its project's is a 400", async () => {
    const created = await t.sim.createProject({ region_id: "aws-eu-central-1", branches: 2 });
    const base = `/projects/${created.project.id}/endpoints`;
    const create = { branch_id: created.branches[1]?.id, type: "read_write" };
    const other = await expectApiError(t, "POST", base, 400, "bad_request", {
      endpoint: { ...create, region_id: DEFAULT_REGION_ID },
    });
    expect(other).toContain("aws-eu-central-1");
    const unknown = await expectApiError(t, "POST", base, 400, "bad_request", {
      endpoint: { ...create, region_id: "aws-nowhere-1" },
    });
    expect(unknown).toContain("unknown region aws-nowhere-1");
    expect(await listEndpoints(t, created.project.id)).toHaveLength(1);
  });
});

describe("/_sim/bulk", () => {
  test("region_id places every project created; an unknown one is a 400", async () => {
    const bulk = await t.sim.bulk({
      projects: 3,
      operations_per_project: 2,
      region_id: "aws-ap-southeast-1",
    });
    for (const id of bulk.project_ids) await expectInRegion(id, "aws-ap-southeast-1");
    const refused = await t.request("POST", "/_sim/bulk", {
      body: { projects: 1, operations_per_project: 0, region_id: "moon-1" },
    });
    expect(refused.status).toBe(400);
    expect(errorBodySchema.parse(refused.body).message).toContain("unknown region moon-1");
    expect(await t.projectIds()).toEqual([...bulk.project_ids].sort());
  });
});
