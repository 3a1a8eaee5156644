import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fullJitterDelay } from "../../src/api/backoff.js";

const config = { baseMs: 500, maxMs: 30_000 };

describe("fullJitterDelay", () => {
  it("spans [0, base × 2^(retry−1)) capped at maxMs", () => {
    const justBelowOne = 1 - Number.EPSILON;
    expect(fullJitterDelay(1, config, () => 0)).toBe(0);
    expect(fullJitterDelay(1, config, () => justBelowOne)).toBe(499);
    expect(fullJitterDelay(2, config, () => justBelowOne)).toBe(999);
    expect(fullJitterDelay(4, config, () => 0.5)).toBe(2000);
    expect(fullJitterDelay(10, config, () => justBelowOne)).toBe(29_999);
    expect(fullJitterDelay(5000, config, () => 0.5)).toBe(15_000);
  });

  it("stays within its window for any retry and any random value (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 600_000 }),
        (retry, random, baseMs, maxMs) => {
          const delay = fullJitterDelay(retry, { baseMs, maxMs }, () => random);
          expect(Number.isInteger(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(0);
          if (baseMs === 0 || maxMs === 0) {
            expect(delay).toBe(0);
          } else {
            expect(delay).toBeLessThan(maxMs);
            expect(delay).toBeLessThan(baseMs * 2 ** (retry - 1));
          }
        },
      ),
    );
  });
});
