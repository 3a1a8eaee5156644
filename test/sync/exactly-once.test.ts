/**
 * Invariant 1 (docs/design.md), exactly-once accounting, as a property over random histories:
 * operations created (many in one second), changing status, failing and being retried, finishing;
 * small pages so that walks cross page boundaries and catch up over several polls; operations
 * created while a walk is in flight; API errors in the middle of walks; restarts that reload state
 * from disk; and a misbehaving API (invariants 8 and 9): records dated far ahead or far back, pages
 * that overlap, cursors that lead back, pages without a cursor, records claiming another project.
 * After every history, the committed end-state arrivals equal the simulator's ground truth.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ApiClient } from "../../src/api/index.js";
import { polledSync } from "../support/polled-sync.js";
import type { TestSimulator } from "../support/simulator.js";
import { committedArrivals, pollOptions, openStateStore, truthArrivals } from "./support.js";
import { simulatorAndApiClient } from "./client-suite.js";

type Step = { status: string; after_seconds: number };

type Command =
  | { kind: "script"; action: string; steps: Step[]; offsetSeconds?: number }
  | { kind: "burst"; count: number }
  | { kind: "advance"; seconds: number }
  | { kind: "poll" }
  | { kind: "pollDuringWrites"; count: number }
  | { kind: "restart" }
  | {
      kind: "fault";
      route: "listOperations" | "getOperation";
      fault: "status" | "drop" | "truncated" | "malformed" | "foreign_project";
    }
  | { kind: "answer"; fault: "overlap" | "cursor_cycle" | "no_pagination"; count: number };

/** About 75 years: far beyond any tolerance, ahead or back. */
const FAR_SECONDS = 75 * 365 * 86_400;

/** A status path the service can take: optional failures each retried, then a last status. */
const steps: fc.Arbitrary<Step[]> = fc
  .tuple(
    fc.constantFrom("scheduling", "running"),
    fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 3 }),
    fc.constantFrom("finished", "failed", "error", "cancelled", "skipped", "running"),
    fc.integer({ min: 0, max: 60 }),
  )
  .map(([first, failures, last, lastAfter]) => {
    const path: Step[] = [{ status: first, after_seconds: 0 }];
    let t = 0;
    for (const gap of failures) {
      path.push({ status: "failed", after_seconds: (t += gap) });
      path.push({ status: "running", after_seconds: (t += gap) });
    }
    if (first === "scheduling" && failures.length === 0) {
      path.push({ status: "running", after_seconds: (t += 1) });
    }
    if (last !== "running") path.push({ status: last, after_seconds: t + lastAfter });
    return path;
  });

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("script" as const),
      action: fc.constantFrom("start_compute", "apply_config", "create_branch", "tenant_attach"),
      steps,
    }),
  },
  {
    // A record shown dated far ahead or far back, where the log puts it now.
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("script" as const),
      action: fc.constantFrom("apply_config", "create_branch"),
      steps,
      offsetSeconds: fc.constantFrom(FAR_SECONDS, -FAR_SECONDS),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("answer" as const),
      fault: fc.constantFrom("overlap" as const, "cursor_cycle" as const, "no_pagination" as const),
      count: fc.integer({ min: 1, max: 4 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("burst" as const),
      count: fc.integer({ min: 2, max: 12 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("advance" as const),
      seconds: fc.integer({ min: 0, max: 45 }),
    }),
  },
  { weight: 4, arbitrary: fc.constant({ kind: "poll" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("pollDuringWrites" as const),
      count: fc.integer({ min: 1, max: 6 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "restart" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("fault" as const),
      route: fc.constantFrom("listOperations" as const, "getOperation" as const),
      fault: fc.constantFrom(
        "status" as const,
        "drop" as const,
        "truncated" as const,
        "malformed" as const,
        "foreign_project" as const,
      ),
    }),
  },
);

describe("exactly-once accounting", () => {
  let sim: TestSimulator;
  let client: ApiClient;

  // One attempt per call: an injected fault fails the poll instead of being retried away.
  simulatorAndApiClient((s) => ({ sim, client } = s));

  it("counts every end-state arrival once across page boundaries, faults and restarts", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(command, { minLength: 5, maxLength: 40 }),
        fc.integer({ min: 1, max: 3 }),
        async (commands, maxPagesPerPoll) => {
          const created = await sim.sim.createProject({ plan: "paid", availability_checks: false });
          const projectId = created.project.id;
          const branchId = created.branches[0]!.id;
          const options = pollOptions({ maxPagesPerPoll });
          const store = await openStateStore();
          let sync = polledSync(projectId, store, client, options);
          const now = async () => Date.parse((await sim.sim.clock()).now);
          const script = (action: string, path: Step[], offsetSeconds?: number) =>
            sim.sim.scriptOperation({
              project_id: projectId,
              branch_id: branchId,
              action,
              steps: path,
              ...(offsetSeconds === undefined ? {} : { created_at_offset_seconds: offsetSeconds }),
            });

          // The first poll is the first start: what ended before it is history, not counted.
          const since = (await sim.sim.clock()).now;
          expect((await sync.step(await now())).kind).toBe("committed");

          for (const c of commands) {
            switch (c.kind) {
              case "script":
                await script(c.action, c.steps, c.offsetSeconds);
                break;
              case "burst":
                for (let i = 0; i < c.count; i++) {
                  await script("check_availability", [
                    { status: "running", after_seconds: 0 },
                    { status: "finished", after_seconds: i % 3 },
                  ]);
                }
                break;
              case "advance":
                await sim.sim.advance(c.seconds);
                break;
              case "poll":
                await sync.step(await now());
                break;
              case "pollDuringWrites": {
                await sim.sim.addFault({
                  route: "listOperations",
                  kind: "latency",
                  latency_ms: 5,
                  count: 6,
                });
                const polling = sync.step(await now());
                for (let i = 0; i < c.count; i++) {
                  await script("apply_config", [
                    { status: "running", after_seconds: 0 },
                    { status: "finished", after_seconds: 2 },
                  ]);
                }
                await polling;
                break;
              }
              case "restart":
                sync = polledSync(projectId, store, client, options);
                break;
              case "fault":
                await sim.sim.addFault({
                  route: c.route,
                  kind: c.fault,
                  ...(c.fault === "status" ? { status: 503 } : {}),
                  count: 1,
                });
                break;
              case "answer":
                await sim.sim.addFault({ route: "listOperations", kind: c.fault, count: c.count });
                break;
            }
          }

          // Let every operation end, then poll until the engine has caught up.
          await sim.sim.clearFaults();
          await sim.sim.advance(600);
          for (let i = 0; i < 200; i++) {
            const outcome = await sync.step(await now());
            expect(outcome.kind).toBe("committed");
            if (outcome.kind === "committed" && outcome.result.caughtUp) break;
          }
          // A restart must resume from the same totals.
          const reloaded = polledSync(projectId, store, client, options);
          await reloaded.load();
          expect(committedArrivals(reloaded.state)).toEqual(
            await truthArrivals(sim, projectId, since),
          );
        },
      ),
      { numRuns: 100 },
    );
  }, 120_000);
});
