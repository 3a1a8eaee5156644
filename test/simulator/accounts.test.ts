/** Organisations and API keys: what each key sees, and the rate limit per account. */
import { afterEach, describe, expect, test } from "vitest";
import { DEFAULT_USER_ID } from "../../src/simulator/index.js";
import { startTestSimulator, SimCallError, type TestSimulator } from "../support/simulator.js";
import { expectApiError } from "./fixtures.js";

let t: TestSimulator;

afterEach(async () => {
  await t.close();
});

interface ListedProject {
  readonly id: string;
  readonly owner_id: string;
  readonly org_id?: string;
}

interface ProjectsPage {
  readonly projects: ListedProject[];
  readonly pagination?: { readonly cursor: string };
}

async function listIds(key: string, query = ""): Promise<string[]> {
  const result = await t.api<ProjectsPage>("GET", `/projects?limit=400${query}`, { apiKey: key });
  expect(result.status, result.text).toBe(200);
  return result.body.projects.map((p) => p.id);
}

const expectError = (
  key: string,
  method: string,
  path: string,
  status: number,
  code: string,
): Promise<string> => expectApiError(t, method, path, status, code, undefined, key);

/** Two users (the default one and bob), an org both belong to and one only bob belongs to. */
async function company(): Promise<{
  shared: string;
  bobs: string;
  personal: string;
  bobPersonal: string;
  inShared: string;
  inBobs: string;
}> {
  const shared = await t.sim.createOrganization({
    name: "Shared",
    members: [DEFAULT_USER_ID, "bob"],
  });
  const bobs = await t.sim.createOrganization({ id: "org-bobs-own-00000001", name: "Bob's" });
  await t.sim.addMember(bobs.id, "bob");
  await t.sim.createApiKey({ key: "bob-key", user: "bob" });
  await t.sim.createApiKey({ key: "shared-key", org: shared.id });
  await t.sim.createApiKey({ key: "bobs-org-key", org: bobs.id });
  const personal = (await t.sim.createProject()).project.id;
  const bobPersonal = (await t.sim.createProject({ user: "bob" })).project.id;
  const inShared = (await t.sim.createProject({ org_id: shared.id })).project.id;
  const inBobs = (await t.sim.createProject({ org_id: bobs.id })).project.id;
  return { shared: shared.id, bobs: bobs.id, personal, bobPersonal, inShared, inBobs };
}

describe("organisations", () => {
  test("generated ids look like the real API's; members and keys are listed", async () => {
    t = await startTestSimulator();
    const org = await t.sim.createOrganization({ name: "Acme", members: ["alice"] });
    expect(org.id).toMatch(/^org-[a-z]+-[a-z]+-\d{8}$/);
    expect(org.members).toEqual(["alice"]);
    expect((await t.sim.addMember(org.id, "bob")).members).toEqual(["alice", "bob"]);
    expect(await t.sim.listOrganizations()).toEqual(
      [org].map((o) => ({ ...o, members: ["alice", "bob"] })),
    );
  });

  test("bad requests: a taken id or key 409, an unknown org 404, malformed fields 400", async () => {
    t = await startTestSimulator();
    await t.sim.createOrganization({ id: "org-one-00000001", name: "One" });
    const refused = async (call: Promise<unknown>, status: number, text: string) => {
      const error = await call.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SimCallError);
      expect((error as SimCallError).status).toBe(status);
      expect(JSON.stringify((error as SimCallError).body)).toContain(text);
    };
    await refused(
      t.sim.createOrganization({ id: "org-one-00000001", name: "Again" }),
      409,
      "org-one-00000001",
    );
    await refused(t.sim.createApiKey({ key: t.apiKey, user: "bob" }), 409, "already in use");
    await refused(
      t.sim.createApiKey({ key: "k", org: "org-none-00000000" }),
      404,
      "org-none-00000000",
    );
    await refused(t.sim.addMember("org-none-00000000", "bob"), 404, "org-none-00000000");
    await refused(t.sim.createProject({ org_id: "org-none-00000000" }), 404, "org-none-00000000");
    await refused(t.sim.createOrganization({ name: "" }), 400, "name");
    await refused(t.sim.createApiKey({ key: "with space", user: "bob" }), 400, "whitespace");
    await refused(
      t.sim.createProject({ org_id: "org-one-00000001", user: "bob" }),
      400,
      "not both",
    );
  });

  test("SimulatorOptions with malformed ids or keys of unknown organisations are refused", async () => {
    t = await startTestSimulator();
    for (const [options, text] of [
      [{ organizations: [{ id: "Org_1", name: "Bad" }] }, "Org_1"],
      [{ organizations: [{ name: "Bad", members: ["no spaces"] }] }, "no spaces"],
      [{ apiKeys: [{ key: "k", org: "org-missing-00000000" }] }, "org-missing-00000000"],
      [{ apiKeys: [{ key: " ", user: "bob" }] }, "empty"],
    ] as const) {
      await expect(startTestSimulator(options)).rejects.toThrow(text);
    }
  });

  test("SimulatorOptions create organisations and keys at start", async () => {
    t = await startTestSimulator({
      organizations: [{ id: "org-start-00000001", name: "Start", apiKeys: ["start-key"] }],
      apiKeys: [{ key: "carol-key", user: "carol" }],
    });
    expect(t.simulator.organizations.map((o) => o.id)).toEqual(["org-start-00000001"]);
    const inOrg = (await t.sim.createProject({ org_id: "org-start-00000001" })).project.id;
    expect(await listIds("start-key")).toEqual([inOrg]);
    expect(await listIds("carol-key")).toEqual([]);
  });
});

describe("what a key sees", () => {
  test("a personal key lists its user's projects, and with org_id those of its orgs", async () => {
    t = await startTestSimulator();
    const c = await company();
    expect(await listIds(t.apiKey)).toEqual([c.personal]);
    expect(await listIds(t.apiKey, `&org_id=${c.shared}`)).toEqual([c.inShared]);
    expect(await listIds("bob-key")).toEqual([c.bobPersonal]);
    expect(await listIds("bob-key", `&org_id=${c.bobs}`)).toEqual([c.inBobs]);
    const entries = await t.api<ProjectsPage>("GET", `/projects?org_id=${c.shared}`);
    expect(entries.body.projects[0]).toMatchObject({ id: c.inShared, org_id: c.shared });
    const personal = await t.api<ProjectsPage>("GET", "/projects");
    expect(personal.body.projects[0]).toMatchObject({ owner_id: DEFAULT_USER_ID });
    expect(personal.body.projects[0]?.org_id).toBeUndefined();
  });

  test("an org that is not the user's, or unknown, answers 404 like an unknown one", async () => {
    t = await startTestSimulator();
    const c = await company();
    const notMember = await expectError(
      t.apiKey,
      "GET",
      `/projects?org_id=${c.bobs}`,
      404,
      "not_found",
    );
    const unknown = await expectError(
      t.apiKey,
      "GET",
      "/projects?org_id=org-x-00000000",
      404,
      "not_found",
    );
    expect(notMember).toBe(`organization ${c.bobs} not found`);
    expect(unknown).toBe("organization org-x-00000000 not found");
    await expectError(t.apiKey, "GET", "/projects?org_id=Not_An_Id", 400, "bad_request");
  });

  test("an org key sees its organisation's projects only; another org_id is refused", async () => {
    t = await startTestSimulator();
    const c = await company();
    expect(await listIds("shared-key")).toEqual([c.inShared]);
    expect(await listIds("shared-key", `&org_id=${c.shared}`)).toEqual([c.inShared]);
    await expectError("shared-key", "GET", `/projects?org_id=${c.bobs}`, 404, "not_found");
    expect(await listIds("bobs-org-key")).toEqual([c.inBobs]);
  });

  test("every project call with a key that cannot see the project answers 404", async () => {
    t = await startTestSimulator();
    const c = await company();
    const paths = (id: string): [string, string][] => [
      ["GET", `/projects/${id}`],
      ["DELETE", `/projects/${id}`],
      ["GET", `/projects/${id}/operations`],
      ["GET", `/projects/${id}/endpoints`],
      ["GET", `/projects/${id}/branches`],
      ["POST", `/projects/${id}/branches`],
    ];
    const hidden: [string, string][] = [
      [t.apiKey, c.bobPersonal],
      [t.apiKey, c.inBobs],
      ["bob-key", c.personal],
      ["shared-key", c.personal],
      ["shared-key", c.inBobs],
      ["bobs-org-key", c.inShared],
    ];
    for (const [key, id] of hidden) {
      for (const [method, path] of paths(id)) {
        const message = await expectError(key, method, path, 404, "not_found");
        expect(message).toBe(`project ${id} not found`);
      }
    }
    // The same calls work for keys that see the project, and nothing was deleted meanwhile.
    for (const [key, id] of [
      [t.apiKey, c.inShared],
      ["shared-key", c.inShared],
      ["bob-key", c.inBobs],
      ["bob-key", c.inShared],
    ] as const) {
      expect((await t.api("GET", `/projects/${id}/endpoints`, { apiKey: key })).status).toBe(200);
    }
    expect(await listIds("bob-key")).toEqual([c.bobPersonal]);
  });

  test("paging by cursor within one account; a cursor from another list is refused", async () => {
    t = await startTestSimulator();
    const org = await t.sim.createOrganization({ name: "Paged", members: [DEFAULT_USER_ID] });
    const inOrg: string[] = [];
    for (let i = 0; i < 5; i++) {
      inOrg.push((await t.sim.createProject({ org_id: org.id })).project.id);
      await t.sim.createProject(); // interleaved personal projects
    }
    const seen: string[] = [];
    let cursor = "";
    for (;;) {
      const page = await t.api<ProjectsPage>(
        "GET",
        `/projects?org_id=${org.id}&limit=2${cursor === "" ? "" : `&cursor=${cursor}`}`,
      );
      seen.push(...page.body.projects.map((p) => p.id));
      if (page.body.projects.length < 2) break;
      cursor = page.body.pagination?.cursor ?? "";
    }
    expect(seen).toEqual(inOrg);
    const personal = await listIds(t.apiKey);
    await expectError(
      t.apiKey,
      "GET",
      `/projects?org_id=${org.id}&cursor=${personal[0] ?? ""}`,
      400,
      "bad_request",
    );
  });
});

describe("rate limit per account", () => {
  test("keys of different accounts have separate buckets; keys of one account share one", async () => {
    t = await startTestSimulator({ rateLimit: { perMinute: 3, burstPerSecond: 100 } });
    const org = await t.sim.createOrganization({ name: "Limited" });
    await t.sim.createApiKey({ key: "org-key", org: org.id });
    await t.sim.createApiKey({ key: "second-personal-key", user: DEFAULT_USER_ID });
    const statuses = async (key: string, count: number): Promise<number[]> => {
      const result: number[] = [];
      for (let i = 0; i < count; i++) {
        result.push((await t.api("GET", "/projects", { apiKey: key })).status);
      }
      return result;
    };
    expect(await statuses(t.apiKey, 2)).toEqual([200, 200]);
    expect(await statuses("second-personal-key", 2)).toEqual([200, 429]);
    expect(await statuses("org-key", 3)).toEqual([200, 200, 200]);
    expect(await statuses("org-key", 1)).toEqual([429]);
  });
});
