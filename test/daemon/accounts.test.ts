/**
 * Several accounts in one exporter, each on its own API address with its own key: each has its
 * own rate limiter and request budget, so a slow account's projects stretch their intervals
 * while the other's keep theirs; `pgcp_scheduler_*` and the status page show them per account;
 * a key never reaches another account's address, nor any log line.
 */
import { readdir } from "node:fs/promises";
import { afterEach, expect, it } from "vitest";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { startTestExporter, tempDir, waitFor, type TestExporter } from "./support.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function simulator(apiKey: string, seed: number): Promise<TestSimulator> {
  const t = await startTestSimulator({ apiKey, seed });
  cleanups.push(() => t.close());
  return t;
}

it("plans each account's projects within its own budget, and shows them per account", async () => {
  const fleet = await simulator("key-fleet-0123", 11);
  const small = await simulator("key-small-4567", 12);
  const fleetIds: string[] = [];
  for (let i = 0; i < 3; i++) fleetIds.push((await fleet.sim.createProject()).project.id);
  const smallIds: string[] = [];
  for (let i = 0; i < 2; i++) smallIds.push((await small.sim.createProject()).project.id);

  const t: TestExporter = await startTestExporter(
    {
      state: { dir: await tempDir() },
      discoveryInterval: 1,
      accounts: [
        {
          name: "fleet",
          keyEnv: "KEY_FLEET",
          url: fleet.apiUrl,
          requestsPerMinute: 600_000,
          burstPerSecond: 10_000,
          projects: "all",
        },
        {
          // Two projects polled every 0.5 s want 240 requests a minute: 6 cannot sustain them.
          name: "small",
          keyEnv: "KEY_SMALL",
          url: small.apiUrl,
          requestsPerMinute: 6,
          projects: smallIds,
        },
      ],
    },
    { KEY_FLEET: fleet.apiKey, KEY_SMALL: small.apiKey },
  );
  cleanups.push(() => t.stop());

  await waitFor("a successful poll of every project of both accounts", async () => {
    for (const id of [...fleetIds, ...smallIds]) {
      if ((await t.value("pgcp_project_up", { project: id })) !== 1) return false;
    }
    return true;
  });
  expect(await t.value("pgcp_scheduler_projects", { account: "fleet" })).toBe(3);
  expect(await t.value("pgcp_scheduler_projects", { account: "small" })).toBe(2);
  expect(await t.value("pgcp_scheduler_interval_stretch_ratio", { account: "fleet" })).toBe(1);
  const stretch = await t.value("pgcp_scheduler_interval_stretch_ratio", { account: "small" });
  expect(stretch).toBeGreaterThan(40);
  // Its projects have had no operations: they are idle, and take the whole stretch.
  expect(
    await t.value("pgcp_scheduler_poll_interval_seconds", { account: "small", lane: "idle" }),
  ).toBeCloseTo(0.5 * (stretch ?? 0), 5);
  expect(
    await t.value("pgcp_scheduler_poll_interval_seconds", { account: "fleet", lane: "base" }),
  ).toBe(0.5);

  // Discovery runs again: a new project of the fleet account is watched without a restart.
  const added = (await fleet.sim.createProject()).project.id;
  await waitFor(
    "the project added to the fleet account",
    async () => (await t.value("pgcp_project_up", { project: added })) === 1,
  );
  expect(await t.value("pgcp_scheduler_projects", { account: "fleet" })).toBe(4);

  // Each key went only to its own account's address.
  for (const t of [fleet, small]) {
    const { routes } = await t.sim.stats();
    const refused = Object.values(routes).reduce((n, byStatus) => n + (byStatus["401"] ?? 0), 0);
    expect(refused).toBe(0);
    expect(routes.listOperations?.["200"]).toBeGreaterThan(0);
  }

  const page = await t.get("/");
  expect(page.text).toContain('data-account="fleet"');
  expect(page.text).toContain('data-account="small"');
  for (const line of t.logs.lines()) {
    const text = JSON.stringify(line);
    expect(text).not.toContain(fleet.apiKey);
    expect(text).not.toContain(small.apiKey);
  }
  expect(page.text).not.toContain(fleet.apiKey);
});

it("watches organisations through personal and organisation keys, each project once", async () => {
  const t = await simulator("key-personal-0123", 21);
  const acme = await t.sim.createOrganization({ name: "Acme", members: ["sim-owner"] });
  const globex = await t.sim.createOrganization({ name: "Globex" });
  await t.sim.createApiKey({ key: "key-acme-4567", org: acme.id });
  await t.sim.createApiKey({ key: "key-globex-8901", org: globex.id });
  const personal = (await t.sim.createProject()).project.id;
  const acmeIds: string[] = [];
  for (let i = 0; i < 2; i++)
    acmeIds.push((await t.sim.createProject({ org_id: acme.id })).project.id);
  const gone = (await t.sim.createProject({ org_id: globex.id })).project.id;
  const stateDir = await tempDir();

  const e = await startTestExporter(
    {
      api: { url: t.apiUrl },
      state: { dir: stateDir },
      discoveryInterval: 0.5,
      discoveryGrace: 3,
      accounts: [
        // A member's personal key: its own projects, and Acme's by org_id.
        { name: "people", keyEnv: "KEY_PERSONAL", projects: "all", orgs: [acme.id] },
        // Acme's own key sees Acme's projects again: they stay with the first account.
        { name: "acme", keyEnv: "KEY_ACME", projects: "all" },
        { name: "globex", keyEnv: "KEY_GLOBEX", projects: "all" },
      ],
    },
    { KEY_PERSONAL: t.apiKey, KEY_ACME: "key-acme-4567", KEY_GLOBEX: "key-globex-8901" },
  );
  cleanups.push(() => e.stop());

  const up = async (id: string) => e.value("pgcp_project_up", { project: id });
  await waitFor("every project polled", async () => {
    for (const id of [personal, ...acmeIds, gone]) if ((await up(id)) !== 1) return false;
    return true;
  });
  expect(await e.value("pgcp_scheduler_projects", { account: "people" })).toBe(3);
  expect(await e.value("pgcp_scheduler_projects", { account: "acme" })).toBe(0);
  expect(await e.value("pgcp_scheduler_projects", { account: "globex" })).toBe(1);
  const shared = e.logs.lines().filter((l) => l.msg.includes("seen under several accounts"));
  expect(shared.map((l) => [l.project, l.account, l.alsoSeenBy]).sort()).toEqual(
    acmeIds.map((id) => [id, "people", ["acme"]]).sort(),
  );

  // Globex deletes its project: it stops being polled at once, its series stay for the grace
  // and then go, and its state file stays.
  const deleted = await t.api("DELETE", `/projects/${gone}`, { apiKey: "key-globex-8901" });
  expect(deleted.status).toBe(200);
  await waitFor(
    "the deleted project no longer polled",
    async () => (await e.value("pgcp_scheduler_projects", { account: "globex" })) === 0,
  );
  const departedAt = Date.now();
  // Its series stay (a poll that met the deletion first says 0).
  expect(await up(gone)).toBeDefined();
  await waitFor("the grace to end", async () => (await up(gone)) === undefined);
  expect(Date.now() - departedAt).toBeGreaterThan(1_500);
  expect((await readdir(stateDir)).some((f) => f.startsWith(gone))).toBe(true);

  // A project new in Acme is found by the next discovery, under the first account.
  const added = (await t.sim.createProject({ org_id: acme.id })).project.id;
  await waitFor("the new Acme project polled", async () => (await up(added)) === 1);
  expect(await e.value("pgcp_scheduler_projects", { account: "people" })).toBe(4);
  for (const line of e.logs.lines()) {
    for (const key of [t.apiKey, "key-acme-4567", "key-globex-8901"]) {
      expect(JSON.stringify(line)).not.toContain(key);
    }
  }
});

it("keeps watching the other accounts when one account's discovery fails, and says which", async () => {
  const t = await simulator("key-personal-4242", 31);
  const hidden = await t.sim.createOrganization({ name: "Not a member" });
  const mine = (await t.sim.createProject()).project.id;
  const e = await startTestExporter(
    {
      api: { url: t.apiUrl },
      state: { dir: await tempDir() },
      discoveryInterval: 0.5,
      accounts: [
        { name: "people", keyEnv: "KEY_PERSONAL", projects: "all" },
        // The key's user is no member: the API answers 404 for this organisation.
        { name: "stranger", keyEnv: "KEY_PERSONAL", orgs: [hidden.id] },
      ],
    },
    { KEY_PERSONAL: t.apiKey },
  );
  cleanups.push(() => e.stop());

  await waitFor(
    "the personal project polled",
    async () => (await e.value("pgcp_project_up", { project: mine })) === 1,
  );
  await waitFor(
    "a failed discovery counted for the stranger account",
    async () =>
      ((await e.value("pgcp_discovery_failures_total", { account: "stranger" })) ?? 0) > 0,
  );
  expect(await e.value("pgcp_discovery_failures_total", { account: "people" })).toBe(0);
  const page = await e.get("/");
  expect(page.text).toContain(
    `data-account="stranger">Project discovery of the account stranger failed`,
  );
  expect(page.text).not.toContain(`discovery-error" data-account="people"`);
});
