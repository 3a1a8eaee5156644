import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TokenBucket } from "../../src/api/token-bucket.js";

function bucketAt(capacity: number, refillPerSecond: number) {
  const clock = { now: 1_000_000 };
  const bucket = new TokenBucket({ capacity, refillPerSecond, now: () => clock.now });
  return { clock, bucket };
}

describe("TokenBucket", () => {
  it("starts full and grants a burst of exactly its capacity", () => {
    const { bucket } = bucketAt(40, 700 / 60);
    for (let i = 0; i < 40; i++) expect(bucket.tryTake()).toBe(0);
    expect(bucket.available()).toBe(0);
    // 1 token at 700/min takes 60/700 s ≈ 85.7 ms.
    expect(bucket.tryTake()).toBe(86);
  });

  it("refills at the sustained rate and never beyond capacity", () => {
    const { clock, bucket } = bucketAt(5, 2);
    for (let i = 0; i < 5; i++) bucket.tryTake();
    clock.now += 1000;
    expect(bucket.available()).toBe(2);
    clock.now += 60_000;
    expect(bucket.available()).toBe(5);
  });

  it("tells how long until the next token without taking one", () => {
    const { clock, bucket } = bucketAt(1, 1);
    expect(bucket.tryTake()).toBe(0);
    clock.now += 400;
    expect(bucket.tryTake()).toBe(600);
    expect(bucket.tryTake()).toBe(600);
    clock.now += 600;
    expect(bucket.tryTake()).toBe(0);
  });

  it("grants nothing while paused and restarts empty after the pause", () => {
    const { clock, bucket } = bucketAt(10, 10);
    bucket.pauseUntil(clock.now + 2000);
    expect(bucket.available()).toBe(0);
    expect(bucket.tryTake()).toBe(2000 + 100);
    clock.now += 2000;
    expect(bucket.tryTake()).toBe(100);
    clock.now += 100;
    expect(bucket.tryTake()).toBe(0);
  });

  it("keeps the later of two pauses", () => {
    const { clock, bucket } = bucketAt(10, 10);
    bucket.pauseUntil(clock.now + 5000);
    bucket.pauseUntil(clock.now + 1000);
    clock.now += 1000;
    expect(bucket.tryTake()).toBe(4000 + 100);
  });

  it("adds nothing when the clock steps back", () => {
    const { clock, bucket } = bucketAt(2, 1);
    bucket.tryTake();
    bucket.tryTake();
    clock.now -= 10_000;
    expect(bucket.available()).toBe(0);
    clock.now += 10_000;
    expect(bucket.available()).toBe(0);
  });

  it("rejects a capacity below 1 and a rate that is not positive", () => {
    const now = () => 0;
    expect(() => new TokenBucket({ capacity: 0, refillPerSecond: 1, now })).toThrow(RangeError);
    expect(() => new TokenBucket({ capacity: 1, refillPerSecond: 0, now })).toThrow(RangeError);
  });

  const schedule = fc.record({
    capacity: fc.integer({ min: 1, max: 50 }),
    perSecond: fc.double({ min: 0.01, max: 100, noNaN: true }),
    steps: fc.array(
      fc.record({
        advanceMs: fc.integer({ min: 0, max: 2000 }),
        takes: fc.integer({ min: 0, max: 60 }),
        pauseMs: fc.option(fc.integer({ min: 0, max: 5000 }), { freq: 8 }),
      }),
      { maxLength: 40 },
    ),
  });

  it("never grants more than capacity + rate × elapsed (property)", () => {
    fc.assert(
      fc.property(schedule, ({ capacity, perSecond, steps }) => {
        const { clock, bucket } = bucketAt(capacity, perSecond);
        const start = clock.now;
        let granted = 0;
        for (const step of steps) {
          clock.now += step.advanceMs;
          if (step.pauseMs !== null) bucket.pauseUntil(clock.now + step.pauseMs);
          for (let i = 0; i < step.takes; i++) if (bucket.tryTake() === 0) granted++;
          const elapsedSeconds = (clock.now - start) / 1000;
          expect(granted).toBeLessThanOrEqual(capacity + perSecond * elapsedSeconds + 1e-6);
        }
      }),
    );
  });

  it("grants a token once the announced wait has passed (property)", () => {
    fc.assert(
      fc.property(schedule, ({ capacity, perSecond, steps }) => {
        const { clock, bucket } = bucketAt(capacity, perSecond);
        for (const step of steps) {
          clock.now += step.advanceMs;
          if (step.pauseMs !== null) bucket.pauseUntil(clock.now + step.pauseMs);
          for (let i = 0; i < step.takes; i++) {
            const wait = bucket.tryTake();
            if (wait > 0) {
              clock.now += wait;
              expect(bucket.tryTake()).toBe(0);
            }
          }
        }
      }),
    );
  });
});
