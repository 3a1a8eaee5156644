/**
 * Endpoint listings follow the operations that change endpoints: a poll that sees one start or
 * end lists the project's endpoints in the same job, however far the timer's next listing is;
 * other polls leave the listing to its slow timer. Driven by hand on a moved monotonic clock.
 */
import { afterEach, expect, it } from "vitest";
import { Scheduler } from "../../src/scheduler/index.js";

let scheduler: Scheduler | undefined;
afterEach(async () => {
  await scheduler?.stop();
  scheduler = undefined;
});

it("lists a project's endpoints when its poll saw an operation that changes them, not otherwise", async () => {
  const clock = { now: 0 };
  const listed: [string, number][] = [];
  const changing = new Set<string>();
  scheduler = new Scheduler(
    {
      baseIntervalSeconds: 5,
      fastIntervalSeconds: 5,
      endpointsIntervalSeconds: 600,
      jitter: 0,
      headroom: 1,
      requestsPerMinute: 1e6,
      maxConcurrent: 4,
      monotonic: () => clock.now,
      random: () => 0,
    },
    {
      poll: (projectId) =>
        Promise.resolve({
          requests: 1,
          open: false,
          endpointsChanged: changing.delete(projectId),
        }),
      listEndpoints: (projectId) => {
        listed.push([projectId, clock.now]);
        return Promise.resolve({ answered: true });
      },
    },
  );
  scheduler.setProjects(["quiet", "busy"]);
  const run = async (seconds: number) => {
    for (let s = 0; s < seconds; s++) {
      clock.now += 1000;
      scheduler?.tick();
      await scheduler?.drain();
    }
  };
  await run(10);
  // The first listing of each is due at once (the timer's spread starts at 0 here).
  expect(listed.map(([id]) => id).sort()).toEqual(["busy", "quiet"]);
  listed.length = 0;
  await run(60);
  expect(listed).toEqual([]);
  changing.add("busy");
  await run(6);
  expect(listed.map(([id]) => id)).toEqual(["busy"]);
  await run(120);
  expect(listed.map(([id]) => id)).toEqual(["busy"]);
});

it("leaves room in the budget for the listings that operations trigger", async () => {
  const clock = { now: 0 };
  scheduler = new Scheduler(
    {
      baseIntervalSeconds: 5,
      fastIntervalSeconds: 5,
      endpointsIntervalSeconds: 600,
      jitter: 0,
      headroom: 1,
      // 20 projects polled every 5 s: 240 a minute, and the timer's listings: 2.
      requestsPerMinute: 300,
      maxConcurrent: 4,
      strategy: "uniform",
      monotonic: () => clock.now,
      random: () => 0,
    },
    {
      // Every poll sees an operation that changes endpoints: a listing each.
      poll: () => Promise.resolve({ requests: 1, open: false, endpointsChanged: true }),
      listEndpoints: () => Promise.resolve({ answered: true }),
    },
  );
  scheduler.setProjects(Array.from({ length: 20 }, (_, i) => `p-${i}`));
  expect(scheduler.budget.stretch).toBe(1);
  for (let s = 0; s < 600; s++) {
    clock.now += 1000;
    scheduler.tick();
    await scheduler.drain();
  }
  // The listings take up to half the budget (150 a minute); the polls stretch into the rest.
  expect(scheduler.budget.stretch).toBeGreaterThan(1.4);
  expect(scheduler.tierIntervalSeconds("idle")).toBeGreaterThan(7);
});
