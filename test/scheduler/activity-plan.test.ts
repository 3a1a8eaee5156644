/**
 * The activity-aware plan's promises, checked over random fleets: it never plans more requests
 * than the budget, keeps every project within `maxInterval` whenever the budget can, and never
 * polls a project with more recent activity less often than one with less.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ACTIVE_WEIGHT,
  IDLE_WEIGHT,
  activityWeight,
  intervalFor,
  planActivity,
  planDemandPerMinute,
  type ActivityPlanInput,
} from "../../src/scheduler/activity-plan.js";

const settings = {
  fastIntervalSeconds: 5,
  baseIntervalSeconds: 30,
  maxIntervalSeconds: 600,
  capacityPerMinute: 630,
};

const fleet = (fast: number, weights: readonly (readonly [count: number, weight: number])[]) => ({
  fastCost: fast,
  projects: weights.flatMap(([count, weight]) =>
    Array.from({ length: count }, () => ({ cost: 1, weight })),
  ),
});

describe("the activity-aware plan", () => {
  it("keeps every project at its interval while the budget holds them", () => {
    // 2 fast (24/min) + 250 at 30 s (500/min): 524 of 630.
    const plan = planActivity({
      ...settings,
      ...fleet(2, [
        [50, 3],
        [200, 0],
      ]),
    });
    expect(plan.fastSeconds).toBe(5);
    expect(intervalFor(plan, 3)).toBe(30);
    expect(intervalFor(plan, 0)).toBe(30);
    expect(plan.beyondMax).toBe(false);
  });

  it("stretches the idle projects most, by the square root of the activity", () => {
    // 10,000 projects: 10 fast (120/min), 200 busy, 9,790 idle.
    const input = {
      ...settings,
      maxIntervalSeconds: 7200,
      ...fleet(10, [
        [200, 4],
        [9790, 0],
      ]),
    };
    const plan = planActivity(input);
    expect(plan.fastSeconds).toBe(5);
    const busy = intervalFor(plan, 4);
    const idle = intervalFor(plan, 0);
    expect(idle / busy).toBeCloseTo(Math.sqrt((4 + IDLE_WEIGHT) / IDLE_WEIGHT));
    expect(busy).toBeGreaterThanOrEqual(5);
    // The busiest as often as the fast interval; never more often.
    expect(intervalFor(plan, 10_000)).toBe(5);
    expect(planDemandPerMinute(input, plan)).toBeCloseTo(630, 3);
  });

  it("holds the idle projects at maxInterval, and stretches the busy ones after them", () => {
    const input = {
      ...settings,
      maxIntervalSeconds: 1800,
      ...fleet(10, [
        [2000, 4],
        [8000, 0],
      ]),
    };
    const plan = planActivity(input);
    expect(intervalFor(plan, 0)).toBe(1800);
    expect(intervalFor(plan, 4)).toBeGreaterThan(30);
    expect(intervalFor(plan, 4)).toBeLessThan(1800);
    expect(planDemandPerMinute(input, plan)).toBeCloseTo(630, 3);
  });

  it("polls everything at one interval beyond maxInterval only when even that cannot fit", () => {
    const plan = planActivity({ ...settings, maxIntervalSeconds: 60, ...fleet(0, [[10_000, 0]]) });
    expect(plan.beyondMax).toBe(true);
    expect(intervalFor(plan, 0)).toBeCloseTo((10_000 * 60) / 630);
  });

  it("weighs an operation 1 when new, and as an idle project's at the end of the window", () => {
    expect(activityWeight(0, 3_600_000)).toBe(1);
    expect(activityWeight(3_600_000, 3_600_000)).toBeCloseTo(ACTIVE_WEIGHT);
    expect(activityWeight(900_000, 3_600_000)).toBeCloseTo(0.5);
  });

  it("never exceeds the budget, orders the projects, and holds maxInterval whenever it can", () => {
    const project = fc.record({
      cost: fc.integer({ min: 1, max: 5 }),
      weight: fc.oneof(fc.constant(0), fc.double({ min: ACTIVE_WEIGHT, max: 100, noNaN: true })),
    });
    fc.assert(
      fc.property(
        fc.array(project, { maxLength: 300 }),
        fc.integer({ min: 0, max: 2000 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 600 }),
        fc.integer({ min: 1, max: 7200 }),
        fc.integer({ min: 1, max: 100_000 }),
        (projects, fastCost, fastInterval, baseInterval, maxInterval, capacityPerMinute) => {
          const input: ActivityPlanInput = {
            fastCost,
            projects,
            fastIntervalSeconds: Math.min(fastInterval, baseInterval),
            baseIntervalSeconds: baseInterval,
            maxIntervalSeconds: maxInterval,
            capacityPerMinute,
          };
          const plan = planActivity(input);
          expect(planDemandPerMinute(input, plan)).toBeLessThanOrEqual(
            capacityPerMinute * (1 + 1e-9),
          );
          // More activity is never polled less often; the fast lane is the fastest.
          const sorted = [...projects].sort((a, b) => a.weight - b.weight);
          for (let i = 1; i < sorted.length; i++) {
            const less = intervalFor(plan, sorted[i - 1]?.weight ?? 0);
            expect(intervalFor(plan, sorted[i]?.weight ?? 0)).toBeLessThanOrEqual(less);
          }
          for (const p of projects) {
            expect(plan.fastSeconds).toBeLessThanOrEqual(intervalFor(plan, p.weight));
          }
          expect(plan.fastSeconds).toBeGreaterThanOrEqual(input.fastIntervalSeconds);
          const max = Math.max(maxInterval, baseInterval);
          const cost = projects.reduce((sum, p) => sum + p.cost, 0) + fastCost;
          if ((cost * 60) / max <= capacityPerMinute) {
            expect(plan.beyondMax).toBe(false);
            for (const p of projects) {
              expect(intervalFor(plan, p.weight)).toBeLessThanOrEqual(max * (1 + 1e-9));
            }
          } else {
            expect(plan.beyondMax).toBe(true);
          }
        },
      ),
    );
  });
});
