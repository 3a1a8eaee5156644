/**
 * What the API refuses backs off: the delays (pure), and the scheduler driven by hand on a
 * monotonic clock the test moves, so that an hour of backoff is checked in milliseconds.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import {
  REFUSAL_CAP_MS,
  Scheduler,
  refusalDelayMs,
  refusedAgain,
} from "../../src/scheduler/index.js";
import { run, scriptedJobs } from "./support.js";

describe("refusal delays", () => {
  it("start at one interval, double with each refusal in a row, and never pass the cap", () => {
    expect([1, 2, 3, 4].map((n) => refusalDelayMs(n, 30_000))).toEqual([
      30_000, 60_000, 120_000, 240_000,
    ]);
    expect(refusalDelayMs(50, 30_000)).toBe(REFUSAL_CAP_MS);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 1, max: 3_600_000 }),
        (count, baseMs) => {
          const delay = refusalDelayMs(count, baseMs);
          expect(delay).toBeLessThanOrEqual(Math.max(REFUSAL_CAP_MS, 0));
          expect(delay).toBeGreaterThanOrEqual(Math.min(baseMs, REFUSAL_CAP_MS));
          expect(refusalDelayMs(count + 1, baseMs)).toBeGreaterThanOrEqual(delay);
        },
      ),
    );
  });

  it("count the refusals in a row", () => {
    const first = refusedAgain(undefined, 1000, 500);
    const second = refusedAgain(first, 2000, 500);
    expect([first, second]).toEqual([
      { count: 1, retryAtMs: 1500 },
      { count: 2, retryAtMs: 3000 },
    ]);
  });
});

const SETTINGS = {
  baseIntervalSeconds: 10,
  fastIntervalSeconds: 10,
  endpointsIntervalSeconds: 0,
  jitter: 0,
  headroom: 0.9,
  requestsPerMinute: 1e6,
  maxConcurrent: 4,
};

let scheduler: Scheduler | undefined;
afterEach(async () => {
  await scheduler?.stop();
  scheduler = undefined;
});

describe("the scheduler, when the API refuses", () => {
  it("backs a refused project off to the cap while the others keep their interval", async () => {
    const clock = { now: 0 };
    const { jobs, answers, polls } = scriptedJobs(clock);
    scheduler = new Scheduler({ ...SETTINGS, monotonic: () => clock.now }, jobs);
    answers.set("gone", { refused: "project" });
    scheduler.setProjects(["ok", "gone"], { immediate: true });
    scheduler.tick();
    await scheduler.drain();
    await run(scheduler, clock, 3600);
    const of = (id: string) => polls.filter(([p]) => p === id).map(([, at]) => at);
    // 3601 s at a 10 s interval.
    expect(of("ok")).toHaveLength(361);
    // 10, 20, 40, … s after each refusal, then every 10 minutes: 6 + 5 in the hour.
    const gone = of("gone");
    expect(gone.slice(0, 7)).toEqual([0, 10_000, 30_000, 70_000, 150_000, 310_000, 630_000]);
    expect(gone.length).toBeLessThanOrEqual(12);
    expect(scheduler.refusedProjects().get("gone")?.count).toBe(gone.length);
    // The budget plans without it.
    expect(scheduler.budget.demandPerMinute).toBeCloseTo(6);
  });

  it("holds every job of a refused key back but one probe, and resumes when it is answered", async () => {
    const clock = { now: 0 };
    const { jobs, answers, polls } = scriptedJobs(clock);
    scheduler = new Scheduler({ ...SETTINGS, monotonic: () => clock.now }, jobs);
    const ids = ["a", "b", "c", "d", "e", "f"];
    for (const id of ids) answers.set(id, { refused: "key" });
    scheduler.setProjects(ids, { immediate: true });
    scheduler.tick();
    await scheduler.drain();
    // The first tick's jobs all ran before the refusal was known: the refusal counts once.
    expect(scheduler.keyRefused()?.count).toBe(1);
    polls.length = 0;
    await run(scheduler, clock, 1800);
    // One probe at a time: 10, 20, 40, … s, then every 10 minutes.
    expect(polls.map(([, at]) => at)).toEqual([
      10_000, 30_000, 70_000, 150_000, 310_000, 630_000, 1_230_000,
    ]);
    answers.clear();
    polls.length = 0;
    scheduler.retryRefused();
    await scheduler.drain();
    await run(scheduler, clock, 2);
    // The probe is answered: every project is polled again, as many at once as the slots allow.
    expect(scheduler.keyRefused()).toBeUndefined();
    expect(new Set(polls.map(([id]) => id))).toEqual(new Set(ids));
  });

  it("tries a refused project again at once when asked (a reload, a discovery)", async () => {
    const clock = { now: 0 };
    const { jobs, answers, polls } = scriptedJobs(clock);
    scheduler = new Scheduler({ ...SETTINGS, monotonic: () => clock.now }, jobs);
    answers.set("gone", { refused: "project" });
    scheduler.setProjects(["gone"], { immediate: true });
    scheduler.tick();
    await scheduler.drain();
    await run(scheduler, clock, 600);
    answers.clear();
    const before = polls.length;
    scheduler.retryRefused();
    await scheduler.drain();
    expect(polls.length).toBe(before + 1);
    expect(scheduler.refusedProjects().size).toBe(0);
    // Back at its interval.
    await run(scheduler, clock, 30);
    expect(polls.length).toBe(before + 4);
  });
});
