/**
 * First start with a backfill window longer than one poll can walk: the catch-up stops at the
 * window's start, so exactly the operations created within the window are counted.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ApiClient } from "../../src/api/index.js";
import { polledSync } from "../support/polled-sync.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { clientFor, committedArrivals, pollOptions, openStateStore } from "./support.js";
import { runsThen } from "../support/operation-steps.js";

let sim: TestSimulator;
let client: ApiClient;

beforeAll(async () => {
  // Records are judged against the engine's wall clock, so the simulated history ends now.
  sim = await startTestSimulator({ startTime: new Date(Date.now() - 48 * 3600_000) });
  client = clientFor(sim, 3);
});
afterAll(async () => {
  await client.close();
  await sim.close();
});

it("counts only the window when the backfill walk spans several polls", async () => {
  const created = await sim.sim.createProject({ plan: "paid", availability_checks: false });
  const projectId = created.project.id;
  const branchId = created.branches[0]!.id;
  // One finished operation an hour for 47 hours (the project's own start and its suspend are
  // older than the window too).
  await sim.sim.advance(3600);
  for (let hour = 0; hour < 47; hour++) {
    await sim.sim.scriptOperation({
      project_id: projectId,
      branch_id: branchId,
      action: "apply_config",
      steps: runsThen("finished", 1),
    });
    await sim.sim.advance(3600);
  }
  const store = await openStateStore();
  // A 6.5 h window holds 6 or 7 of them (whole hours before now); 2 per page, 1 page per poll.
  // Every transition handed over for alerts: history counted by a backfill raises none.
  const alertable: string[] = [];
  const options = pollOptions({
    backfillSeconds: 6 * 3600 + 1800,
    firstPageLimit: 2,
    pageLimit: 2,
    maxPagesPerPoll: 1,
    alertsFor: (transitions) => {
      alertable.push(...transitions.map((t) => t.kind));
      return { entries: [], silenced: [] };
    },
  });
  const sync = polledSync(projectId, store, client, options);
  let polls = 0;
  for (; polls < 100; polls++) {
    const outcome = await sync.step(Date.now());
    if (outcome.kind === "committed" && !outcome.result.catchingUp) break;
  }
  expect(polls).toBeGreaterThan(1);
  const windowStart = Date.now() - options.backfillSeconds * 1000;
  const inWindow = (await sim.sim.truth(projectId)).filter(
    (op) => op.action === "apply_config" && Date.parse(op.created_at) >= windowStart - 1000,
  ).length;
  expect(inWindow).toBeGreaterThanOrEqual(6);
  expect(committedArrivals(sync.state)).toEqual({ "apply_config finished": inWindow });
  expect(alertable).toEqual([]);
});
