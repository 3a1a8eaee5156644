/**
 * Property: for any scripted history (many operations per second included) and any limit,
 * walking every page with the iterator yields each operation exactly once, newest first, even
 * when new operations arrive between pages.
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import type { Operation } from "../../src/contract/index.js";
import type { TestSimulator } from "../support/simulator.js";
import { simulatorAndClient, type TestClient } from "./support/client.js";

let t: TestSimulator;
let c: TestClient;

simulatorAndClient((s) => ({ t, c } = s));

const scenario = fc.record({
  /** Bursts of operations; a burst after a 0-second advance shares the previous one's second. */
  bursts: fc.array(
    fc.record({
      advanceSeconds: fc.constantFrom(0, 0, 1, 3),
      count: fc.integer({ min: 1, max: 12 }),
    }),
    { minLength: 1, maxLength: 6 },
  ),
  limit: fc.integer({ min: 1, max: 50 }),
  /** After the page with this index, this many new operations are scripted. */
  arrivals: fc.array(
    fc.record({ afterPage: fc.nat({ max: 8 }), count: fc.integer({ min: 1, max: 3 }) }),
    {
      maxLength: 3,
    },
  ),
});

it("walks every operation exactly once, newest first (property)", { timeout: 60_000 }, async () => {
  await fc.assert(
    fc.asyncProperty(scenario, async ({ bursts, limit, arrivals }) => {
      const { project, branches } = await t.sim.createProject({ plan: "paid" });
      const script = (): Promise<Operation> =>
        t.sim.scriptOperation({
          project_id: project.id,
          branch_id: branches[0]?.id ?? "",
          action: "apply_config",
          steps: [{ status: "running", after_seconds: 0 }],
        });
      for (const burst of bursts) {
        if (burst.advanceSeconds > 0) await t.sim.advance(burst.advanceSeconds);
        for (let i = 0; i < burst.count; i++) await script();
      }
      const before = (await t.sim.truth(project.id)).map((o) => o.id);

      const walked: Operation[] = [];
      let page = 0;
      for await (const { operations } of c.api.operationPages(project.id, { limit })) {
        walked.push(...operations);
        for (const arrival of arrivals.filter((a) => a.afterPage === page)) {
          for (let i = 0; i < arrival.count; i++) await script();
        }
        page++;
      }

      const ids = walked.map((o) => o.id);
      expect(new Set(ids).size).toBe(ids.length);
      const known = new Set(before);
      expect(ids.filter((id) => known.has(id))).toEqual(before);
      const times = walked.map((o) => Date.parse(o.created_at));
      expect(times).toEqual([...times].sort((a, b) => b - a));
    }),
    { numRuns: 30 },
  );
});
