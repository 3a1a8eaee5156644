/**
 * The activity-aware plan's promises, checked over random fleets: it never plans more requests
 * than the budget, keeps every project within `maxInterval` whenever the budget can, and never
 * polls a tier with more recent activity less often than one with less.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  TIERS,
  planTiers,
  tierDemandPerMinute,
  type Tier,
} from "../../src/scheduler/activity-plan.js";

const settings = {
  fastIntervalSeconds: 5,
  baseIntervalSeconds: 30,
  maxIntervalSeconds: 600,
  capacityPerMinute: 630,
};

const cost = (fast: number, active: number, idle: number): Record<Tier, number> => ({
  fast,
  active,
  idle,
});

describe("the activity-aware plan", () => {
  it("keeps every tier at its interval while the budget holds them", () => {
    // 2 fast (24/min) + 50 active and 200 idle at 30 s (500/min): 524 of 630.
    expect(planTiers({ ...settings, cost: cost(2, 50, 200) })).toEqual({
      intervals: { fast: 5, active: 30, idle: 30 },
      beyondMax: false,
    });
  });

  it("stretches the idle projects first, and only as far as the budget needs", () => {
    // 10,000 projects: 10 fast (120/min), 200 active (400/min), 9,790 idle sharing 110/min.
    const c = cost(10, 200, 9790);
    const plan = planTiers({ ...settings, maxIntervalSeconds: 7200, cost: c });
    expect(plan.intervals.fast).toBe(5);
    expect(plan.intervals.active).toBe(30);
    expect(plan.intervals.idle).toBeCloseTo((9790 * 60) / 110);
    expect(plan.beyondMax).toBe(false);
    expect(tierDemandPerMinute(c, plan.intervals)).toBeCloseTo(630);
  });

  it("stretches the active projects once the idle ones reach maxInterval", () => {
    const c = cost(10, 200, 9790);
    const plan = planTiers({ ...settings, maxIntervalSeconds: 3600, cost: c });
    expect(plan.intervals.fast).toBe(5);
    expect(plan.intervals.idle).toBe(3600);
    // 630 - 120 - 9,790/60 per minute are left for the active ones.
    expect(plan.intervals.active).toBeCloseTo((200 * 60) / (630 - 120 - 9790 / 60));
    expect(plan.beyondMax).toBe(false);
  });

  it("polls everything at one interval beyond maxInterval only when even that cannot fit", () => {
    const plan = planTiers({ ...settings, maxIntervalSeconds: 60, cost: cost(0, 0, 10_000) });
    expect(plan.beyondMax).toBe(true);
    expect(plan.intervals.idle).toBeCloseTo((10_000 * 60) / 630);
  });

  it("never exceeds the budget, orders the tiers, and holds maxInterval whenever it can", () => {
    const tierCost = fc.double({ min: 0, max: 20_000, noNaN: true });
    fc.assert(
      fc.property(
        tierCost,
        tierCost,
        tierCost,
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 600 }),
        fc.integer({ min: 1, max: 7200 }),
        fc.integer({ min: 1, max: 100_000 }),
        (fast, active, idle, fastInterval, baseInterval, maxInterval, capacityPerMinute) => {
          const c = cost(fast, active, idle);
          const input = {
            cost: c,
            fastIntervalSeconds: Math.min(fastInterval, baseInterval),
            baseIntervalSeconds: baseInterval,
            maxIntervalSeconds: maxInterval,
            capacityPerMinute,
          };
          const plan = planTiers(input);
          const { intervals } = plan;
          expect(tierDemandPerMinute(c, intervals)).toBeLessThanOrEqual(
            capacityPerMinute * (1 + 1e-9),
          );
          expect(intervals.fast).toBeLessThanOrEqual(intervals.active);
          expect(intervals.active).toBeLessThanOrEqual(intervals.idle);
          expect(intervals.fast).toBeGreaterThanOrEqual(input.fastIntervalSeconds);
          const max = Math.max(maxInterval, baseInterval);
          const allAtMax = ((fast + active + idle) * 60) / max;
          if (allAtMax <= capacityPerMinute) {
            expect(plan.beyondMax).toBe(false);
            for (const t of TIERS) expect(intervals[t]).toBeLessThanOrEqual(max * (1 + 1e-9));
          } else {
            expect(plan.beyondMax).toBe(true);
          }
        },
      ),
    );
  });
});
