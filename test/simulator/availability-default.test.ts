/** The control plane's own periodic load (seed 2.2) is on by default, every 600 s. */
import { afterEach, expect, test } from "vitest";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.js";

let simulator: RunningSimulator | undefined;

afterEach(async () => {
  await simulator?.close();
  simulator = undefined;
});

async function checksWithin(seconds: number, availabilityCheckSeconds?: number): Promise<number> {
  simulator = await startSimulator({
    apiKey: "k",
    clock: "manual",
    seed: 5,
    rateLimit: false,
    ...(availabilityCheckSeconds === undefined ? {} : { availabilityCheckSeconds }),
  });
  const headers = { Authorization: "Bearer k" };
  const created = await fetch(`${simulator.url}/_sim/projects`, {
    method: "POST",
    headers,
    body: JSON.stringify({ plan: "paid" }),
  });
  const { project } = (await created.json()) as { project: { id: string } };
  simulator.advance(seconds);
  const response = await fetch(`${simulator.url}/_sim/truth?project_id=${project.id}`, { headers });
  const truth = (await response.json()) as { operations: { action: string }[] };
  return truth.operations.filter((o) => o.action === "check_availability").length;
}

test("startSimulator runs availability checks every 600 s unless told otherwise", async () => {
  // One per period; the first lands at a seeded phase within the first period.
  expect(await checksWithin(1800)).toBe(3);
});

test("availabilityCheckSeconds 0 switches them off", async () => {
  expect(await checksWithin(1800, 0)).toBe(0);
});
