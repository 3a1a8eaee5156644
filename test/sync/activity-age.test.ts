/**
 * How long ago a project was last used, as a poll tells the scheduler: the newest operation it
 * read, by the API's clock, leaving out the control plane's periodic availability checks (they
 * come to every project alike and would keep a whole fleet "active").
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ApiClient } from "../../src/api/index.js";
import { ProjectSync } from "../../src/sync/index.js";
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

it("gives the age of the newest operation read, the availability checks aside", async () => {
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
  await sim.sim.advance(600);
  const configured = await script("apply_config");
  await sim.sim.advance(900);
  await script("check_availability");
  await sim.sim.advance(300);
  await script("check_availability");
  await sim.sim.advance(120);

  const sync = new ProjectSync(projectId, await openStateStore(), client, pollOptions());
  const outcome = await sync.step(Date.now());
  if (outcome.kind !== "committed") throw new Error(`poll ${outcome.kind}`);
  const { newestActivityMs, serverNowMs } = outcome.result;
  expect(newestActivityMs).toBe(Math.floor(Date.parse(configured.created_at) / 1000) * 1000);
  // 900 + 300 + 120 s by the API's clock.
  expect(serverNowMs - (newestActivityMs ?? 0)).toBeGreaterThanOrEqual(1320_000);
  expect(serverNowMs - (newestActivityMs ?? 0)).toBeLessThan(1322_000);
});
