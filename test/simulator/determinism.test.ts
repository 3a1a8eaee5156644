/** Same seed and same calls: the same ids and the same records. */
import { expect, test } from "vitest";
import { startTestSimulator } from "../support/simulator.js";
import { runsThen } from "../support/operation-steps.js";

/** A fixed sequence of calls; returns everything the simulator answered, ids included. */
async function run(seed: number): Promise<unknown[]> {
  const t = await startTestSimulator({ seed, availabilityCheckSeconds: 120 });
  try {
    const answers: unknown[] = [];
    const a = await t.sim.createProject({ plan: "paid", branches: 3 });
    const b = await t.sim.createProject({ plan: "free", branches: 2 });
    answers.push(a, b);
    await t.sim.advance(10);
    const created = await t.api("POST", `/projects/${a.project.id}/endpoints`, {
      body: { endpoint: { branch_id: a.branches[1]?.id, type: "read_write" } },
    });
    answers.push(created.body);
    answers.push(
      await t.sim.scriptOperation({
        project_id: b.project.id,
        branch_id: b.branches[0]?.id ?? "",
        action: "apply_config",
        steps: runsThen("failed", 3),
      }),
    );
    await t.sim.advance(900);
    answers.push(await t.sim.truth(a.project.id), await t.sim.truth(b.project.id));
    answers.push((await t.api("GET", "/projects")).body);
    return answers;
  } finally {
    await t.close();
  }
}

test("two simulators with the same seed and the same calls answer identically", async () => {
  const first = await run(1234);
  expect(await run(1234)).toEqual(first);
});

test("another seed gives other ids", async () => {
  const [a] = (await run(1234)) as [{ project: { id: string } }];
  const [b] = (await run(4321)) as [{ project: { id: string } }];
  expect(a.project.id).not.toBe(b.project.id);
});
