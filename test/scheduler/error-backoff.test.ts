/**
 * A project whose polls fail on the API's side backs off: the waits (pure), and the scheduler
 * driven by hand on a monotonic clock the test moves, so that minutes of backoff are checked in
 * milliseconds.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import {
  ERROR_BACKOFF_JITTER,
  Scheduler,
  backoffPerMinute,
  errorBackoffAfter,
  errorBackoffDelayMs,
  type JobOutcome,
} from "../../src/scheduler/index.js";
import { run, scriptedJobs } from "./support.js";

describe("the waits of a failing project", () => {
  it("start at twice the interval, double with each failed poll in a row, and never pass the bound", () => {
    expect([1, 2, 3, 4, 5].map((n) => errorBackoffDelayMs(n, 2000, 20_000, 0))).toEqual([
      4000, 8000, 16_000, 20_000, 20_000,
    ]);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 1, max: 600_000 }),
        fc.integer({ min: 1, max: 3_600_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (count, baseMs, maxMs, random) => {
          const delay = errorBackoffDelayMs(count, baseMs, maxMs, random);
          // Never beyond the bound, never sooner than the interval.
          expect(delay).toBeLessThanOrEqual(Math.max(maxMs, baseMs));
          expect(delay).toBeGreaterThanOrEqual(baseMs);
          // The jitter takes at most its share off the doubled wait.
          const full = errorBackoffDelayMs(count, baseMs, maxMs, 0);
          expect(delay).toBeGreaterThanOrEqual(Math.min(full, full * (1 - ERROR_BACKOFF_JITTER)));
          expect(errorBackoffDelayMs(count + 1, baseMs, maxMs, 0)).toBeGreaterThanOrEqual(full);
        },
      ),
    );
  });

  it("grow with each failed poll and end at the first other one", () => {
    const delay = { baseMs: 1000, maxMs: 60_000, random: 0 };
    const failed = { polled: true, outcome: { requests: 5, failed: "server_error" as const } };
    const first = errorBackoffAfter(undefined, failed, 10_000, delay);
    expect(first).toEqual({
      reason: "server_error",
      count: 1,
      retryAtMs: 12_000,
      delayMs: 2000,
      requests: 5,
    });
    // Five requests every two seconds.
    expect(backoffPerMinute(first!)).toBe(150);
    const second = errorBackoffAfter(first, { ...failed, outcome: { failed: "timeout" } }, 12_000, {
      ...delay,
      random: 0.5,
    });
    expect(second).toMatchObject({ reason: "timeout", count: 2, requests: 1 });
    expect(second?.delayMs).toBe(4000 * (1 - ERROR_BACKOFF_JITTER / 2));
    // A job that only listed endpoints says nothing of the polls.
    expect(errorBackoffAfter(second, { polled: false, outcome: undefined }, 13_000, delay)).toBe(
      second,
    );
    for (const outcome of [{ answered: true }, { refused: "project" as const }, {}, undefined]) {
      expect(errorBackoffAfter(second, { polled: true, outcome }, 16_000, delay)).toBeUndefined();
    }
  });
});

const SETTINGS = {
  baseIntervalSeconds: 2,
  fastIntervalSeconds: 2,
  endpointsIntervalSeconds: 0,
  jitter: 0,
  headroom: 1,
  maxConcurrent: 8,
  errorBackoffMaxSeconds: 20,
  // No jitter: the waits are exact.
  random: () => 0,
};

/** A poll that failed after its retries: three requests. */
const FAILED: JobOutcome = { requests: 3, failed: "server_error" };

let scheduler: Scheduler | undefined;
afterEach(async () => {
  await scheduler?.stop();
  scheduler = undefined;
});

/** A scheduler of `SETTINGS` within `requestsPerMinute`, its jobs scripted, on the test's clock. */
function start(requestsPerMinute: number) {
  const clock = { now: 0 };
  const scripted = scriptedJobs(clock);
  const s = new Scheduler(
    { ...SETTINGS, requestsPerMinute, monotonic: () => clock.now },
    scripted.jobs,
  );
  scheduler = s;
  return { clock, s, ...scripted };
}

/** The longest gap between two polls, and from the last one to `end`. */
function longestGap(times: readonly number[], end: number): number {
  let gap = 0;
  for (let i = 1; i <= times.length; i++) gap = Math.max(gap, (times[i] ?? end) - times[i - 1]!);
  return gap;
}

describe("the scheduler, when a project's polls fail on the API's side", () => {
  it("backs the failing projects off while the healthy ones keep their interval, and recovers at the first success", async () => {
    // Five projects at 2 s cost 150 requests a minute: the budget holds 120.
    const { clock, s, answers, of } = start(120);
    const failing = ["f1", "f2", "f3"];
    const healthy = ["h1", "h2"];
    s.setProjects([...healthy, ...failing], { immediate: true });
    s.tick();
    await s.drain();
    await run(s, clock, 10);
    expect(s.budget.stretch).toBeGreaterThan(1);

    for (const id of failing) answers.set(id, FAILED);
    const faultAt = clock.now;
    await run(s, clock, 60);
    // 4, 8, 16, 20, 20 s after each failed poll.
    for (const id of failing) {
      const tries = of(id).filter((at) => at > faultAt);
      expect(tries.length).toBeGreaterThanOrEqual(5);
      expect(tries.length).toBeLessThanOrEqual(7);
    }
    expect(s.projectBackoffs().get("f1")).toMatchObject({ reason: "server_error" });
    expect(s.projectBackoffs().has("h1")).toBe(false);
    // The failing ones cost 27 requests a minute at the bound: the healthy ones fit at their
    // interval.
    expect(s.budget.stretch).toBe(1);
    for (const id of healthy) {
      const since = of(id).filter((at) => at >= faultAt);
      expect(longestGap(since, clock.now)).toBeLessThanOrEqual(2000);
    }

    answers.clear();
    const fixedAt = clock.now;
    await run(s, clock, 30);
    expect(s.projectBackoffs().size).toBe(0);
    for (const id of failing) {
      const after = of(id).filter((at) => at > fixedAt);
      // Its next try comes within the bound, and from then on every interval.
      expect(after[0]! - fixedAt).toBeLessThanOrEqual(20_000);
      expect(longestGap(after, clock.now)).toBeLessThanOrEqual(4000);
    }
  });

  it("plans the budget with a failing project's backoff's cost, not a share of the plan", async () => {
    const { clock, s, answers } = start(1e6);
    answers.set("f", FAILED);
    s.setProjects(["ok", "f"], { immediate: true });
    s.tick();
    await s.drain();
    await run(s, clock, 1);
    // Only the healthy project is planned at its interval: 30 requests a minute.
    expect(s.budget.demandPerMinute).toBeCloseTo(30);
  });

  it("tries a failing project again at once when nudged, or after a reload", async () => {
    const { clock, s, answers, of } = start(1e6);
    answers.set("f", FAILED);
    s.setProjects(["f"], { immediate: true });
    s.tick();
    await s.drain();
    await run(s, clock, 30);
    const before = of("f").length;
    expect(s.nudge(["f"]).get("f")).toBe("nudged");
    await s.drain();
    expect(of("f")).toHaveLength(before + 1);
    // Still failing: it backs off further.
    expect(s.projectBackoffs().get("f")?.count).toBe(before + 1);

    answers.clear();
    s.retryRefused();
    await s.drain();
    expect(of("f")).toHaveLength(before + 2);
    expect(s.projectBackoffs().size).toBe(0);
    // Back at its interval.
    await run(s, clock, 10);
    expect(of("f")).toHaveLength(before + 7);
  });
});
