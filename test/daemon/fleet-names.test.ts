/**
 * Names beside ids, on the whole exporter in-process against the simulator over real HTTP, its
 * webhook sink pointed at a local receiver:
 * - `pgcp_project_info` of a listed project of an organisation: its name, account, organisation
 *   (read once), region and Postgres version; `pgcp_branch_info` of its branches, read once at
 *   the start and again when branch operations are seen, a deleted branch's series kept for the
 *   discovery grace and then dropped; no branch listing while the project is quiet;
 * - an alert of that project carries the project's, branch's and endpoint's names;
 * - `projects: all` takes the names from discovery's listing, with no read of each project;
 * - without branch series, a project's branches are read first when its alerts want their
 *   names;
 * - past `maxBranchesPerProject`, the default branch and the oldest are kept.
 *
 * The simulator's clock is manual: scripted operations move only when the test advances it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_USER_ID } from "../../src/simulator/index.js";
import { webhookPayloadSchema } from "../../src/alerts/sinks/webhook-payload.js";
import { startReceiver, type Receiver } from "../support/receiver.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { sleep } from "../support/wait.js";
import { startTestExporter, tempDir, waitFor, type Sample, type TestExporter } from "./support.js";

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

/** What `started` gives, closed after the test. */
async function closedAfter<T extends { close(): Promise<void> }>(started: Promise<T>): Promise<T> {
  const value = await started;
  cleanups.push(() => value.close());
  return value;
}

const simulator = (): Promise<TestSimulator> => closedAfter(startTestSimulator());
const receiver = (): Promise<Receiver> => closedAfter(startReceiver());

async function exporter(
  raw: Record<string, unknown>,
  env: NodeJS.ProcessEnv = {},
): Promise<TestExporter> {
  const e = await startTestExporter(raw, env);
  cleanups.push(() => e.stop());
  return e;
}

/** The series of `name` whose labels include `labels`. */
async function series(
  e: TestExporter,
  name: string,
  labels: Record<string, string> = {},
): Promise<Sample[]> {
  return (await e.samples()).filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
}

/** How many times the simulator answered a route. */
async function answered(sim: TestSimulator, route: string): Promise<number> {
  const stats = await sim.sim.stats();
  return Object.values(stats.routes[route] ?? {}).reduce((a, b) => a + b, 0);
}

describe("a listed project of an organisation", () => {
  it("is shown by name with its branches, and its alerts speak names", async () => {
    const sim = await simulator();
    const hook = await receiver();
    const org = await sim.sim.createOrganization({ name: "Acme Corp", members: [DEFAULT_USER_ID] });
    const created = await sim.api<{
      project: { id: string; pg_version: number };
      branch: { id: string; name: string };
      endpoints: { id: string }[];
    }>("POST", `/projects?org_id=${org.id}`, {
      body: { project: { name: "Tenant Acme", branch: { name: "production" } } },
    });
    expect(created.status).toBe(201);
    const id = created.body.project.id;
    const main = created.body.branch.id;
    const endpointId = created.body.endpoints[0]!.id;
    // The project's creation and its compute's start end before the endpoint is renamed.
    await sim.sim.advance(60);
    const renamed = await sim.api("PATCH", `/projects/${id}/endpoints/${endpointId}`, {
      body: { endpoint: { name: "primary-rw" } },
    });
    expect(renamed.status).toBe(200);

    const reads = await answered(sim, "getProject");
    const e = await exporter(
      {
        api: { url: sim.apiUrl, key: sim.apiKey },
        projects: [id],
        state: { dir: await tempDir() },
        poll: { endpointsInterval: 600 },
        metrics: { branches: true },
        discoveryGrace: 2,
        sinks: [{ name: "hook", kind: "webhook", urlEnv: "PGCP_TEST_HOOK_URL", groupWindow: 0 }],
      },
      { PGCP_TEST_HOOK_URL: `${hook.url}/hook` },
    );

    const info = await waitFor("the project's info", async () => {
      const [one] = await series(e, "pgcp_project_info", { project: id });
      return one;
    });
    expect(info.labels).toEqual({
      project: id,
      name: "Tenant Acme",
      account: "default",
      org_id: org.id,
      org_name: "Acme Corp",
      region_id: info.labels.region_id,
      pg_version: String(created.body.project.pg_version),
    });
    expect(info.value).toBe(1);
    expect(info.labels.region_id).not.toBe("");
    await waitFor("the default branch", async () => {
      const [one] = await series(e, "pgcp_branch_info", { project: id, branch: main });
      return one?.labels.default === "true" && one.labels.parent === "" ? true : undefined;
    });

    // Quiet: polls go on, and the branches are not listed again.
    const listings = await answered(sim, "listBranches");
    await sleep(1500);
    expect(await answered(sim, "listBranches")).toBe(listings);
    expect(await answered(sim, "getProject")).toBe(reads + 1);
    expect(await answered(sim, "getOrganization")).toBe(1);

    // A new branch: its create_branch is seen, and the branches are listed again.
    const branch = await sim.api<{ branch: { id: string } }>("POST", `/projects/${id}/branches`, {
      body: { branch: { name: "preview/pr-812" } },
    });
    const previewId = branch.body.branch.id;
    await waitFor("the new branch", async () => {
      const [one] = await series(e, "pgcp_branch_info", { project: id, branch: previewId });
      return one?.labels.name === "preview/pr-812" && one.labels.parent === main ? true : undefined;
    });

    // A failure on the endpoint of the default branch: the alert names all three.
    const failing = { status: "failed", after_seconds: 1, error: "config rejected" };
    const where = { project_id: id, branch_id: main, endpoint_id: endpointId };
    const steps = [{ status: "running", after_seconds: 0 }, failing];
    await sim.sim.scriptOperation({ ...where, action: "apply_config", steps });
    await sim.sim.advance(2);
    const alert = await waitFor("the alert", () => {
      const bodies = hook.requests.map((r) => webhookPayloadSchema.parse(r.json));
      return bodies.flatMap((b) => b.alerts).find((a) => a.kind === "operation_failed");
    });
    expect(alert).toMatchObject({
      project_id: id,
      project_name: "Tenant Acme",
      branch_id: main,
      branch_name: "production",
      endpoint_id: endpointId,
      endpoint_name: "primary-rw",
    });

    // The branch deleted: its series stays for the grace (2 s), then goes.
    const deleted = await sim.api("DELETE", `/projects/${id}/branches/${previewId}`);
    expect(deleted.status).toBe(200);
    await sim.sim.advance(5);
    const before = await answered(sim, "listBranches");
    await waitFor("a listing after the deletion", async () =>
      (await answered(sim, "listBranches")) > before ? true : undefined,
    );
    expect(await series(e, "pgcp_branch_info", { branch: previewId })).toHaveLength(1);
    await waitFor("the deleted branch's series gone after the grace", async () =>
      (await series(e, "pgcp_branch_info", { branch: previewId })).length === 0 ? true : undefined,
    );
    expect(await series(e, "pgcp_branch_info", { branch: main })).toHaveLength(1);
  });
});

describe("discovered projects", () => {
  it("take their names from the listing, with no read of each project", async () => {
    const sim = await simulator();
    const ids = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await sim.sim.createProject({ availability_checks: false })).project.id);
    }
    const e = await exporter({
      api: { url: sim.apiUrl, key: sim.apiKey },
      projects: "all",
      state: { dir: await tempDir() },
    });
    await waitFor("every project's info", async () =>
      (await series(e, "pgcp_project_info")).length === ids.length ? true : undefined,
    );
    for (const s of await series(e, "pgcp_project_info")) {
      expect(s.labels.name).not.toBe("");
      expect(s.labels.org_id).toBe("");
      expect(s.labels.org_name).toBe("");
    }
    expect(await answered(sim, "getProject")).toBe(0);
    // The default detail (standard) serves no branch series without `metrics.branches`, and
    // reads no branches while no alert wants their names.
    expect(await series(e, "pgcp_branch_info")).toEqual([]);
    expect(await answered(sim, "listBranches")).toBe(0);
  });

  it("read a project's branches first when its alerts want their names", async () => {
    const sim = await simulator();
    const hook = await receiver();
    // A quiet project beside it: its branches are never read.
    await sim.sim.createProject({ availability_checks: false });
    const created = await sim.sim.createProject({ availability_checks: false });
    const id = created.project.id;
    const branch = created.branches[0]!;
    await sim.sim.advance(60);
    const e = await exporter(
      {
        api: { url: sim.apiUrl, key: sim.apiKey },
        projects: "all",
        state: { dir: await tempDir() },
        sinks: [{ name: "hook", kind: "webhook", urlEnv: "PGCP_TEST_HOOK_URL", groupWindow: 1 }],
      },
      { PGCP_TEST_HOOK_URL: `${hook.url}/hook` },
    );
    await waitFor("both projects' info", async () =>
      (await series(e, "pgcp_project_info")).length === 2 ? true : undefined,
    );
    expect(await answered(sim, "listBranches")).toBe(0);

    const steps = [
      { status: "running", after_seconds: 0 },
      { status: "failed", after_seconds: 1, error: "config rejected" },
    ];
    await sim.sim.scriptOperation({
      project_id: id,
      branch_id: branch.id,
      action: "apply_config",
      steps,
    });
    await sim.sim.advance(2);
    const alert = await waitFor("the alert", () => {
      const bodies = hook.requests.map((r) => webhookPayloadSchema.parse(r.json));
      return bodies.flatMap((b) => b.alerts).find((a) => a.kind === "operation_failed");
    });
    const listed = await sim.api<{ branches: { id: string; name: string }[] }>(
      "GET",
      `/projects/${id}/branches`,
    );
    const name = listed.body.branches.find((b) => b.id === branch.id)?.name;
    expect(name).toBeDefined();
    expect(alert).toMatchObject({ project_id: id, branch_id: branch.id, branch_name: name });
    // The failing project's branches alone, once (and the test's own listing).
    expect(await answered(sim, "listBranches")).toBe(2);
  });

  it("keep the default branch and the oldest past the cap", async () => {
    const sim = await simulator();
    const created = await sim.sim.createProject({ branches: 5, availability_checks: false });
    const id = created.project.id;
    const e = await exporter({
      api: { url: sim.apiUrl, key: sim.apiKey },
      projects: [id],
      state: { dir: await tempDir() },
      metrics: { detail: "full", maxBranchesPerProject: 3 },
    });
    const listed = await sim.api<{
      branches: { id: string; default: boolean; created_at: string }[];
    }>("GET", `/projects/${id}/branches`);
    const expected = [...listed.body.branches]
      .sort(
        (a, b) =>
          Number(b.default) - Number(a.default) ||
          Date.parse(a.created_at) - Date.parse(b.created_at),
      )
      .slice(0, 3)
      .map((b) => b.id)
      .sort();
    const shown = await waitFor("the branches", async () => {
      const found = await series(e, "pgcp_branch_info", { project: id });
      return found.length > 0 ? found.map((s) => s.labels.branch ?? "").sort() : undefined;
    });
    expect(shown).toEqual(expected);
    expect(
      e.logs
        .lines()
        .some((l) => l.msg.includes("more branches than metrics.maxBranchesPerProject")),
    ).toBe(true);
  });
});
