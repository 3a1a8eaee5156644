import { setImmediate as nextTurn } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { Scheduler, type SchedulerJobs } from "../../src/scheduler/index.js";

/** Jobs that end only when the test says so, recording which project ran when. */
function heldJobs() {
  const started: string[] = [];
  const release: (() => void)[] = [];
  const jobs: SchedulerJobs = {
    poll: (projectId, signal) => {
      started.push(projectId);
      return new Promise((resolve) => {
        release.push(() => {
          resolve({ requests: 1, open: false });
        });
        // A job the scheduler abandons when it stops.
        signal.addEventListener("abort", () => {
          resolve({ requests: 0, open: false });
        });
      });
    },
    listEndpoints: () => Promise.resolve(undefined),
  };
  return { jobs, started, release };
}

const options = {
  baseIntervalSeconds: 3600,
  fastIntervalSeconds: 3600,
  endpointsIntervalSeconds: 0,
  jitter: 0,
  headroom: 0.9,
  requestsPerMinute: 1e6,
  maxConcurrent: 2,
  monotonic: () => performance.now(),
};

let scheduler: Scheduler | undefined;
afterEach(async () => {
  await scheduler?.stop();
  scheduler = undefined;
});

describe("scheduler", () => {
  it("starts the next due poll as soon as a job ends, not at the next tick", async () => {
    const { jobs, started, release } = heldJobs();
    scheduler = new Scheduler(options, jobs);
    const ids = ["p1", "p2", "p3", "p4", "p5", "p6"];
    scheduler.setProjects(ids, { immediate: true });
    scheduler.start();
    scheduler.tick();
    expect(started).toHaveLength(2);
    // Each job's end lets exactly one more start, within the same turn of the event loop
    // (the once-a-second tick could not account for five starts in a few milliseconds).
    for (let n = 3; n <= 6; n++) {
      release.shift()?.();
      await nextTurn();
      expect(started).toHaveLength(n);
    }
    expect([...started].sort()).toEqual(ids);
    for (const r of release.splice(0)) r();
  });

  it("starts a poll when it falls due between two ticks, not at the tick after it", async () => {
    const started: number[] = [];
    const t0 = performance.now();
    scheduler = new Scheduler(
      { ...options, baseIntervalSeconds: 0.2, fastIntervalSeconds: 0.2 },
      {
        poll: () => {
          started.push(performance.now() - t0);
          return Promise.resolve({ requests: 1, open: false });
        },
        listEndpoints: () => Promise.resolve(undefined),
      },
    );
    scheduler.setProjects(["p"], { immediate: true });
    scheduler.start();
    await new Promise((resolve) => setTimeout(resolve, 950));
    // Every 200 ms, within the first second's tick: the tick alone would poll it once.
    expect(started.length).toBeGreaterThanOrEqual(4);
    for (let i = 1; i < started.length; i++) {
      expect((started[i] ?? 0) - (started[i - 1] ?? 0)).toBeLessThan(400);
    }
  });

  it("never runs more than maxConcurrent jobs at once", async () => {
    const { jobs, started, release } = heldJobs();
    scheduler = new Scheduler({ ...options, maxConcurrent: 3 }, jobs);
    scheduler.setProjects(
      Array.from({ length: 10 }, (_, i) => `p${i}`),
      { immediate: true },
    );
    scheduler.start();
    scheduler.tick();
    scheduler.tick();
    await nextTurn();
    expect(started).toHaveLength(3);
    for (const r of release.splice(0)) r();
  });

  it("lets many jobs wait on its abort signal without a MaxListenersExceededWarning", async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on("warning", onWarning);
    try {
      const listening: (() => void)[] = [];
      scheduler = new Scheduler(
        { ...options, maxConcurrent: 40 },
        {
          // As an API call waiting for a retry does: listen for the abort until it ends.
          poll: (_id, signal) =>
            new Promise((resolve) => {
              const onAbort = () => {
                resolve({ requests: 0, open: false });
              };
              signal.addEventListener("abort", onAbort, { once: true });
              listening.push(() => {
                signal.removeEventListener("abort", onAbort);
                resolve({ requests: 1, open: false });
              });
            }),
          listEndpoints: () => Promise.resolve(undefined),
        },
      );
      scheduler.setProjects(
        Array.from({ length: 40 }, (_, i) => `p${i}`),
        { immediate: true },
      );
      scheduler.tick();
      expect(listening).toHaveLength(40);
      await nextTurn();
      for (const end of listening) end();
      await scheduler.drain();
      expect(warnings.map((w) => w.name)).not.toContain("MaxListenersExceededWarning");
    } finally {
      process.off("warning", onWarning);
    }
  });
});
