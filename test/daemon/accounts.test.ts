/**
 * Several accounts in one exporter, each on its own API address with its own key: each has its
 * own rate limiter and request budget, so a slow account's projects stretch their intervals
 * while the other's keep theirs; `pgcp_scheduler_*` and the status page show them per account;
 * a key never reaches another account's address, nor any log line.
 */
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
  expect(
    await t.value("pgcp_scheduler_poll_interval_seconds", { account: "small", lane: "base" }),
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
