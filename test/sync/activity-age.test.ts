/**
 * How busy a project has been of late, as a poll tells the scheduler: when each operation it
 * read was created, by the API's clock, new or already known, leaving out the control plane's
 * periodic availability checks (they come to every project alike and would keep a whole fleet
 * "active").
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ApiClient } from "../../src/api/index.js";
import { polledSync } from "../support/polled-sync.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { runsThen } from "../support/operation-steps.js";
import { clientFor, openStateStore, pollOptions } from "./support.js";

let sim: TestSimulator;
let client: ApiClient;

beforeAll(async () => {
  sim = await startTestSimulator({ startTime: new Date(Date.now() - 3600_000) });
  client = clientFor(sim, 3);
});
afterAll(async () => {
  await client.close();
  await sim.close();
});

it("gives when each operation it read was created, the availability checks aside", async () => {
  const created = await sim.sim.createProject({ plan: "paid", availability_checks: false });
  const projectId = created.project.id;
  const branchId = created.branches[0]?.id ?? "";
  const script = (action: string) =>
    sim.sim.scriptOperation({
      project_id: projectId,
      branch_id: branchId,
      action,
      steps: runsThen("finished", 1),
    });
  const secondMs = (iso: string) => Math.floor(Date.parse(iso) / 1000) * 1000;
  await sim.sim.advance(600);
  const first = await script("apply_config");
  await sim.sim.advance(900);
  await script("check_availability");
  // The daemon's default first page: the newest 50 records, new or not.
  const options = pollOptions({ firstPageLimit: 50 });
  const sync = polledSync(projectId, await openStateStore(), client, options);
  const before = await sync.step(Date.now());
  if (before.kind !== "committed") throw new Error(`poll ${before.kind}`);
  await sim.sim.advance(300);
  const second = await script("apply_config");
  await script("check_availability");
  await sim.sim.advance(120);

  // The second poll reads the first operation again, below its checkpoint: it still counts.
  const outcome = await sync.step(Date.now());
  if (outcome.kind !== "committed") throw new Error(`poll ${outcome.kind}`);
  const { activityMs, serverNowMs } = outcome.result;
  // Every record of the log but the checks: the project's creation, its compute, both configs.
  const log = await client.listOperations(projectId, { limit: 50 });
  const users = log.operations.filter((o) => o.action !== "check_availability");
  expect(log.operations.length - users.length).toBe(2);
  expect([...activityMs].sort()).toEqual(users.map((o) => secondMs(o.created_at)).sort());
  expect(activityMs).toContain(secondMs(first.created_at));
  expect(activityMs).toContain(secondMs(second.created_at));
  // 900 + 300 + 120 s and 120 s by the API's clock.
  const age = (iso: string) => (serverNowMs - secondMs(iso)) / 1000;
  expect(age(first.created_at)).toBeGreaterThanOrEqual(1320);
  expect(age(first.created_at)).toBeLessThan(1322);
  expect(age(second.created_at)).toBeGreaterThanOrEqual(120);
  expect(age(second.created_at)).toBeLessThan(122);
});
