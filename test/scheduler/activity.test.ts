/**
 * The scheduler with the activity strategy, driven by hand on a monotonic clock the test moves:
 * under a budget too small for every project at its interval, a project with recent operations
 * keeps the base interval while the idle ones share what is left, none waiting longer than
 * `maxInterval`; the uniform strategy gives every project the same stretched interval.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Scheduler, type PollStrategy } from "../../src/scheduler/index.js";

let scheduler: Scheduler | undefined;
afterEach(async () => {
  await scheduler?.stop();
  scheduler = undefined;
});

/** Ten projects at 2 s would need five requests a second; the budget is one. */
function tightBudget(clock: { now: number }, strategy: PollStrategy = "activity") {
  return {
    baseIntervalSeconds: 2,
    fastIntervalSeconds: 1,
    endpointsIntervalSeconds: 0,
    jitter: 0,
    headroom: 1,
    requestsPerMinute: 60,
    maxConcurrent: 4,
    strategy,
    monotonic: () => clock.now,
    random: () => 0.5,
  };
}

/** The API's clock: its own epoch, far from the monotonic clock's. */
const API_EPOCH_MS = Date.UTC(2026, 0, 1);

/** What a poll read: its operations' ages (by the API's clock) and the API's time then. */
function read(clock: { now: number }, activityAgesMs: readonly number[], rate = 1) {
  return { activityAgesMs, apiNowMs: API_EPOCH_MS + clock.now * rate };
}

/** Moves the clock on a second at a time, ticking and waiting for the jobs every second. */
async function advance(clock: { now: number }, seconds: number): Promise<void> {
  for (let s = 0; s < seconds; s++) {
    clock.now += 1000;
    scheduler?.tick();
    await scheduler?.drain();
  }
}

/** Ten minutes of polls of `hot` (always active) and nine idle projects, by project. */
async function tenMinutes(
  strategy: PollStrategy,
  spread: { jitter?: number; random?: () => number; maxIntervalSeconds?: number } = {},
): Promise<Map<string, number[]>> {
  const clock = { now: 0 };
  const polls = new Map<string, number[]>();
  scheduler = new Scheduler(
    { ...tightBudget(clock, strategy), ...spread },
    {
      poll: (projectId) => {
        polls.set(projectId, [...(polls.get(projectId) ?? []), clock.now]);
        // The hot project's log shows an operation a second old at every poll.
        return Promise.resolve({
          requests: 1,
          open: false,
          ...read(clock, projectId === "hot" ? [1000] : []),
        });
      },
      listEndpoints: () => Promise.resolve(undefined),
    },
  );
  scheduler.setProjects(["hot", ...Array.from({ length: 9 }, (_, i) => `idle-${i}`)]);
  await advance(clock, 600);
  return polls;
}

/** The longest wait between two polls, or from the first second to the first poll (s). */
function longestGap(times: readonly number[]): number {
  return Math.max(...times.map((t, i) => (t - (times[i - 1] ?? 0)) / 1000));
}

describe("the activity strategy", () => {
  it("takes a project whose newest operation is recent as active from its first poll", async () => {
    const clock = { now: 0 };
    const polls = new Map<string, number>();
    scheduler = new Scheduler(tightBudget(clock), {
      // As after a restart: no new operation, but "busy" had one ten seconds ago.
      poll: (projectId) => {
        polls.set(projectId, (polls.get(projectId) ?? 0) + 1);
        return Promise.resolve({
          requests: 1,
          open: false,
          ...read(clock, projectId === "busy" ? [10_000] : [86_400_000]),
        });
      },
      listEndpoints: () => Promise.resolve(undefined),
    });
    scheduler.setProjects(["busy", ...Array.from({ length: 9 }, (_, i) => `quiet-${i}`)]);
    await advance(clock, 120);
    // About four times as often as the quiet ones (the square root of its weight against
    // theirs): every 3 to 4 s against 13 s. Taken for idle, it would share their 11 s.
    expect(polls.get("busy")).toBeGreaterThanOrEqual(25);
    expect(polls.get("quiet-0")).toBeLessThanOrEqual(10);
  });

  it("ages a project's activity by the API's clock, however fast it runs", async () => {
    // The API's clock runs sixty times ours (a simulator at speed 60), and an operation counts
    // for a minute of it: "hot" shows one operation at its first poll, which ages out of the
    // window in a second of ours. Aged by our clock, it would count for a minute of ours.
    const clock = { now: 0 };
    const polls = new Map<string, number>();
    let createdMs: number | undefined;
    scheduler = new Scheduler(
      { ...tightBudget(clock), activeWindowSeconds: 60 },
      {
        poll: (projectId) => {
          polls.set(projectId, (polls.get(projectId) ?? 0) + 1);
          const idle = read(clock, [], 60);
          if (projectId !== "hot") return Promise.resolve({ requests: 1, open: false, ...idle });
          createdMs ??= idle.apiNowMs;
          const ages = [idle.apiNowMs - createdMs];
          return Promise.resolve({ requests: 1, open: false, ...read(clock, ages, 60) });
        },
        listEndpoints: () => Promise.resolve(undefined),
      },
    );
    scheduler.setProjects(["hot", ...Array.from({ length: 9 }, (_, i) => `idle-${i}`)]);
    await advance(clock, 60);
    // Idle from its second on, "hot" shares the pace of the others: every 10 s or so.
    expect(polls.get("hot")).toBeLessThanOrEqual((polls.get("idle-0") ?? 0) + 2);
  });

  it("polls an active project most often and the idle ones within maxInterval", async () => {
    const polls = await tenMinutes("activity");
    const all = [...polls.values()].reduce((n, times) => n + times.length, 0);
    // Within the budget: a request a second.
    expect(all).toBeLessThanOrEqual(600 + 10);
    // The uniform plan would poll every project every 10 s; maxInterval defaults to twice that.
    expect(scheduler?.maxIntervalSeconds()).toBe(20);
    expect(polls.get("hot")?.length).toBeGreaterThanOrEqual(250);
    for (const [id, times] of polls) {
      if (id === "hot") continue;
      expect(longestGap(times), id).toBeLessThanOrEqual(20);
      expect(times.length, id).toBeLessThan(polls.get("hot")?.length ?? 0);
    }
  });

  it("keeps maxInterval where it is while operations open across the fleet", async () => {
    const clock = { now: 0 };
    let open = false;
    scheduler = new Scheduler(tightBudget(clock), {
      poll: () => Promise.resolve({ requests: 1, open, ...read(clock, open ? [1000] : []) }),
      listEndpoints: () => Promise.resolve(undefined),
    });
    scheduler.setProjects(Array.from({ length: 10 }, (_, i) => `p-${i}`));
    await advance(clock, 60);
    expect(scheduler.budget.stretch).toBe(5);
    expect(scheduler.maxIntervalSeconds()).toBe(20);
    // Every project has open operations: uniform stretches every interval twice as far, but the
    // bound on waiting stays what the fleet and the budget give.
    open = true;
    await advance(clock, 60);
    expect(scheduler.budget.stretch).toBe(10);
    expect(scheduler.maxIntervalSeconds()).toBe(20);
  });

  it("follows the plan at once when the budget's share moves, not at the next poll", async () => {
    const clock = { now: 0 };
    let busy = true;
    const polls = new Map<string, number[]>();
    const open = new Set(["p-0", "p-1", "p-2", "p-3"]);
    scheduler = new Scheduler(
      { ...tightBudget(clock), maxIntervalSeconds: 60 },
      {
        poll: (projectId) => {
          polls.set(projectId, [...(polls.get(projectId) ?? []), clock.now]);
          return Promise.resolve({ requests: 1, open: busy && open.has(projectId) });
        },
        listEndpoints: () => Promise.resolve(undefined),
      },
    );
    scheduler.setProjects(Array.from({ length: 10 }, (_, i) => `p-${i}`));
    // Four projects with open operations take most of the budget: the six others wait 60 s.
    await advance(clock, 120);
    expect(scheduler.tierIntervalSeconds("idle")).toBe(60);
    // The operations end: every project shares the budget alike, one every 10 s, and the six
    // are polled at that pace from now on, not after the 60 s planned at their last poll.
    busy = false;
    const switched = clock.now;
    await advance(clock, 30);
    expect(scheduler.tierIntervalSeconds("idle")).toBe(10);
    for (let i = 4; i < 10; i++) {
      const after = (polls.get(`p-${i}`) ?? []).filter((t) => t > switched);
      expect(after.length, `p-${i}`).toBeGreaterThanOrEqual(2);
    }
  });

  it("holds maxInterval however far the jitter would carry a poll", async () => {
    // The idle ones at maxInterval (15 s), every due time as late as a 10% jitter allows
    // (16.5 s): due one tick inside the bound, so that a poll that waits its turn for a tick
    // still starts within it.
    const polls = await tenMinutes("activity", {
      jitter: 0.1,
      random: () => 0.999,
      maxIntervalSeconds: 15,
    });
    for (const [id, times] of polls) {
      if (id !== "hot") expect(longestGap(times), id).toBeLessThanOrEqual(15);
    }
  });

  it("is uniform when asked: every project at one stretched interval", async () => {
    const polls = await tenMinutes("uniform");
    const counts = [...polls.values()].map((times) => times.length);
    expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
    expect(counts.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(600 + 10);
    expect(scheduler?.tierIntervalSeconds("idle")).toBe(10);
    expect(scheduler?.tierIntervalSeconds("active")).toBe(10);
  });
});
