import { describe, expect, it } from "vitest";
import { RateLimiter, type Permit } from "../../src/api/rate-limiter.js";
import { ManualClock, flushPromises } from "./support/virtual-clock.js";

function limiter(options: { perSecond: number; burst: number; maxConcurrency: number }) {
  const clock = new ManualClock();
  const rl = new RateLimiter({
    refillPerSecond: options.perSecond,
    burst: options.burst,
    maxConcurrency: options.maxConcurrency,
    clock,
  });
  return { clock, rl };
}

/** Starts `n` acquisitions and records which have been granted. */
function acquireMany(rl: RateLimiter, n: number, signal?: AbortSignal) {
  const granted: Permit[] = [];
  const failed: unknown[] = [];
  for (let i = 0; i < n; i++) {
    rl.acquire(signal).then(
      (permit) => granted.push(permit),
      (error: unknown) => failed.push(error),
    );
  }
  return { granted, failed };
}

describe("RateLimiter", () => {
  it("lets a burst through at once, then one request per refill interval", async () => {
    const { clock, rl } = limiter({ perSecond: 10, burst: 3, maxConcurrency: 100 });
    const { granted } = acquireMany(rl, 6);
    await flushPromises();
    expect(granted.map((p) => p.waitedMs)).toEqual([0, 0, 0]);
    expect(rl.stats()).toMatchObject({ tokensRemaining: 0, queued: 3, inFlight: 3 });
    await clock.advance(100);
    expect(granted.map((p) => p.waitedMs)).toEqual([0, 0, 0, 100]);
    await clock.advance(200);
    expect(granted.map((p) => p.waitedMs)).toEqual([0, 0, 0, 100, 200, 300]);
    expect(rl.stats()).toMatchObject({ granted: 6, totalWaitedMs: 600, queued: 0 });
  });

  it("caps requests in flight and admits the next one on release", async () => {
    const { clock, rl } = limiter({ perSecond: 1000, burst: 100, maxConcurrency: 2 });
    const { granted } = acquireMany(rl, 3);
    await flushPromises();
    expect(granted).toHaveLength(2);
    await clock.advance(50);
    expect(granted).toHaveLength(2);
    granted[0]?.release();
    granted[0]?.release(); // releasing twice frees one slot only
    await flushPromises();
    expect(granted).toHaveLength(3);
    expect(granted[2]?.waitedMs).toBe(50);
    expect(rl.stats().inFlight).toBe(2);
  });

  it("holds everyone back during a pause, then resumes at the sustained rate", async () => {
    const { clock, rl } = limiter({ perSecond: 10, burst: 10, maxConcurrency: 100 });
    rl.pause(1000);
    const { granted } = acquireMany(rl, 2);
    await clock.advance(999);
    expect(granted).toHaveLength(0);
    await clock.advance(101);
    expect(granted).toHaveLength(1);
    await clock.advance(100);
    expect(granted.map((p) => p.waitedMs)).toEqual([1100, 1200]);
  });

  it("drops an aborted caller from the queue with the signal's reason", async () => {
    const { clock, rl } = limiter({ perSecond: 1, burst: 1, maxConcurrency: 10 });
    await rl.acquire();
    const controller = new AbortController();
    const waiting = rl.acquire(controller.signal);
    const { granted } = acquireMany(rl, 1);
    controller.abort(new Error("stop"));
    await expect(waiting).rejects.toThrow("stop");
    await clock.advance(1000);
    expect(granted).toHaveLength(1);
    expect(granted[0]?.waitedMs).toBe(1000);
    await expect(rl.acquire(controller.signal)).rejects.toThrow("stop");
  });

  it("rejects queued and later callers once closed", async () => {
    const { rl } = limiter({ perSecond: 1, burst: 1, maxConcurrency: 10 });
    await rl.acquire();
    const { failed } = acquireMany(rl, 2);
    rl.close();
    await flushPromises();
    expect(failed).toHaveLength(2);
    await expect(rl.acquire()).rejects.toThrow(/closed/);
  });
});
