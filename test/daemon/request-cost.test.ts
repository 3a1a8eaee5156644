/**
 * Request cost of the sync engine, witnessed by the simulator's own request counts
 * (`/_sim/stats`), not by the engine's report: an idle project costs one request per poll, and
 * operations still open below the first page cost no more than the cheaper of reading each one
 * and reading the pages down to them from the top. Every open operation is still followed to
 * its end and counted once.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ApiClient } from "../../src/api/index.js";
import { FileStateStore } from "../../src/store/index.js";
import type { PollOptions } from "../../src/sync/index.js";
import { polledSync, type PolledSync } from "../support/polled-sync.js";
import type { TestSimulator } from "../support/simulator.js";
import { committedArrivals, pollOptions, stateDir, truthArrivals } from "../sync/support.js";
import { runsThen } from "../support/operation-steps.js";
import { simulatorAndApiClient } from "../sync/client-suite.js";

/** The primary endpoint suspends itself 300 s after its start; idle phases stay well below. */
const AUTO_SUSPEND_SECONDS = 300;

describe("request cost", () => {
  let sim: TestSimulator;
  let client: ApiClient;

  simulatorAndApiClient((s) => ({ sim, client } = s));

  const now = async () => Date.parse((await sim.sim.clock()).now);

  /** A project with no availability checks whose own first operations have ended. */
  async function quietProject() {
    const created = await sim.sim.createProject({ plan: "paid", availability_checks: false });
    // create_timeline and start_compute take a few seconds; the endpoint is then active.
    await sim.sim.advance(10);
    return { projectId: created.project.id, branchId: created.branches[0]!.id };
  }

  async function syncFor(projectId: string, options: PollOptions) {
    const store = new FileStateStore(await stateDir());
    await store.open();
    return polledSync(projectId, store, client, options);
  }

  /** Polls and returns what the simulator saw, which must match what the engine reports. */
  async function measuredPoll(sync: PolledSync) {
    await sim.sim.resetStats();
    const outcome = await sync.step(await now());
    if (outcome.kind !== "committed") throw new Error(`poll ${outcome.kind}`);
    const stats = await sim.sim.stats();
    expect(outcome.result.requests).toBe(stats.total);
    return { result: outcome.result, stats };
  }

  it("an idle project costs exactly one listOperations request per poll", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          history: fc.integer({ min: 0, max: 12 }),
          firstPageLimit: fc.integer({ min: 1, max: 5 }),
          pageLimit: fc.integer({ min: 1, max: 6 }),
          // Idle gaps between polls; their sum stays below the auto-suspend delay.
          gaps: fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 1, maxLength: 12 }),
        }),
        async ({ history, firstPageLimit, pageLimit, gaps }) => {
          const { projectId, branchId } = await quietProject();
          // Finished history, several records per second, so that the first page may end in the
          // middle of a second.
          for (let i = 0; i < history; i++) {
            await sim.sim.scriptOperation({
              project_id: projectId,
              branch_id: branchId,
              action: "apply_config",
              steps: runsThen("finished", 1),
            });
            if (i % 3 === 2) await sim.sim.advance(1);
          }
          await sim.sim.advance(2);
          const sync = await syncFor(
            projectId,
            pollOptions({ firstPageLimit, pageLimit, maxPagesPerPoll: 50 }),
          );
          const first = await sync.step(await now());
          expect(first.kind).toBe("committed");
          expect(sync.state?.tracked).toEqual([]);

          await sim.sim.resetStats();
          for (const gap of gaps) {
            await sim.sim.advance(gap);
            const outcome = await sync.step(await now());
            expect(outcome.kind).toBe("committed");
            if (outcome.kind === "committed") expect(outcome.result.transitions).toEqual([]);
          }
          expect(gaps.reduce((a, b) => a + b, 0) + 12).toBeLessThan(AUTO_SUSPEND_SECONDS);
          // The simulator is the witness: N polls, N list requests, nothing else.
          const { total, routes } = await sim.sim.stats();
          expect({ total, routes }).toEqual({
            total: gaps.length,
            routes: { listOperations: { "200": gaps.length } },
          });
        },
      ),
      { numRuns: 25 },
    );
  });

  interface OpenLayout {
    /** Per open operation: finished operations created just before it, and its duration. */
    readonly open: readonly { below: number; seconds: number; fails: boolean }[];
    /** Finished operations created after them, which push them off the first page. */
    readonly onTop: number;
    readonly limits: { firstPageLimit: number; pageLimit: number };
    readonly idlePolls: number;
  }

  const openLayout: fc.Arbitrary<OpenLayout> = fc.record({
    open: fc.array(
      fc.record({
        below: fc.integer({ min: 0, max: 4 }),
        seconds: fc.integer({ min: 30, max: 200 }),
        fails: fc.boolean(),
      }),
      { minLength: 1, maxLength: 8 },
    ),
    onTop: fc.integer({ min: 0, max: 14 }),
    // As with the engine's defaults (50 and 500), later pages are at least as large as the first.
    limits: fc
      .tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 3 }))
      .map(([first, more]) => ({ firstPageLimit: first, pageLimit: first + more })),
    idlePolls: fc.integer({ min: 1, max: 3 }),
  });

  /** Eight open operations in a row under five finished ones, pages of 3 then 4. */
  const EIGHT_UNDER_FIVE: OpenLayout = {
    open: Array.from({ length: 8 }, () => ({ below: 0, seconds: 150, fails: false })),
    onTop: 5,
    limits: { firstPageLimit: 3, pageLimit: 4 },
    idlePolls: 2,
  };
  /** Three open operations under two finished ones, pages of 3. */
  const THREE_UNDER_TWO: OpenLayout = {
    open: Array.from({ length: 3 }, () => ({ below: 0, seconds: 30, fails: false })),
    onTop: 2,
    limits: { firstPageLimit: 3, pageLimit: 3 },
    idlePolls: 1,
  };

  /**
   * Builds the layout, checks the request count of each idle poll against `bound(N, pages)`
   * (`pages`: the pages a walk from the top reads to reach the deepest open operation), then
   * lets every operation end and compares the committed arrivals with the truth.
   */
  async function openOperationsScenario(
    { open, onTop, limits, idlePolls }: OpenLayout,
    bound: (open: number, pagesToReach: number) => number,
  ): Promise<void> {
    const { projectId, branchId } = await quietProject();
    const sync = await syncFor(projectId, pollOptions({ ...limits, maxPagesPerPoll: 50 }));
    const script = (action: string, steps: { status: string; after_seconds: number }[]) =>
      sim.sim.scriptOperation({ project_id: projectId, branch_id: branchId, action, steps });
    const finished = async (n: number) => {
      for (let i = 0; i < n; i++) {
        await script("create_branch", [
          { status: "running", after_seconds: 0 },
          { status: "finished", after_seconds: 1 },
        ]);
      }
    };

    const since = (await sim.sim.clock()).now;
    expect((await sync.step(await now())).kind).toBe("committed");

    // N long-running operations, some failing once and being retried, with finished ones in
    // between; the engine sees them all open.
    const openIds: string[] = [];
    for (const o of open) {
      await finished(o.below);
      const steps = o.fails
        ? [
            { status: "running", after_seconds: 0 },
            { status: "failed", after_seconds: Math.floor(o.seconds / 3) },
            { status: "running", after_seconds: Math.floor(o.seconds / 2) },
            { status: "finished", after_seconds: o.seconds },
          ]
        : [
            { status: "running", after_seconds: 0 },
            { status: "finished", after_seconds: o.seconds },
          ];
      openIds.push((await script("apply_config", steps)).id);
    }
    await sim.sim.advance(2);
    expect((await sync.step(await now())).kind).toBe("committed");
    expect(sync.state?.tracked.map((t) => t.id).sort()).toEqual([...openIds].sort());

    // Finished operations on top push the open ones off the first page.
    await finished(onTop);
    await sim.sim.advance(2);
    expect((await sync.step(await now())).kind).toBe("committed");

    // Where the open operations are now (0 = newest), and what reaching them from the top costs.
    const log = (await sim.sim.truth(projectId)).map((op) => op.id);
    const depths = openIds.map((id) => log.indexOf(id));
    expect(Math.min(...depths)).toBeGreaterThanOrEqual(0);
    const pagesToReach = pagesDownTo(Math.max(...depths), limits);

    for (let i = 0; i < idlePolls; i++) {
      await sim.sim.advance(1);
      const { stats } = await measuredPoll(sync);
      expect(
        stats.total - 1,
        `extra requests with open operations at depths ${depths.join(",")}, ` +
          `${JSON.stringify(limits)}: ${JSON.stringify(stats.routes)}`,
      ).toBeLessThanOrEqual(bound(openIds.length, pagesToReach));
      expect(sync.state?.tracked).toHaveLength(openIds.length);
    }

    // Let them end; each end is counted once, whatever read found it.
    for (let t = 0; t < 220; t += 20) {
      await sim.sim.advance(20);
      expect((await sync.step(await now())).kind).toBe("committed");
    }
    expect(sync.state?.tracked).toEqual([]);
    expect(committedArrivals(sync.state)).toEqual(await truthArrivals(sim, projectId, since));
  }

  it("open operations below the first page cost at most one request each, and each end is counted once", async () => {
    await fc.assert(
      fc.asyncProperty(openLayout, (layout) => openOperationsScenario(layout, (n) => n)),
      { numRuns: 30, examples: [[EIGHT_UNDER_FIVE], [THREE_UNDER_TWO]] },
    );
  });

  /*
   * Followed operations are re-read from where the walk stopped (or from their own page
   * cursor when that lies deeper), newest first, so reads never overlap: in THREE_UNDER_TWO an
   * idle poll makes 1 list + 1 page, in EIGHT_UNDER_FIVE 1 + 3 (invariant 5 in
   * docs/design.md: the fewer requests of re-reading pages or reading each).
   */
  it("open operations below the first page cost at most min(N, pages down to them) extra requests", async () => {
    for (const layout of [THREE_UNDER_TWO, EIGHT_UNDER_FIVE]) {
      await openOperationsScenario(layout, (n, pages) => Math.min(n, pages - 1));
    }
  });
});

/** Pages a walk from the top reads to reach the record at `depth` (0 = newest). */
function pagesDownTo(depth: number, limits: { firstPageLimit: number; pageLimit: number }) {
  if (depth < limits.firstPageLimit) return 1;
  return 1 + Math.ceil((depth + 1 - limits.firstPageLimit) / limits.pageLimit);
}
