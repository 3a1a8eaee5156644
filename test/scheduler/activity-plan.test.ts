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
  OPEN_WEIGHT,
  activityWeight,
  intervalFor,
  planActivity,
  plannedWeight,
  planDemandPerMinute,
  type ActivityPlanInput,
} from "../../src/scheduler/activity-plan.js";

const settings = {
  fastIntervalSeconds: 5,
  baseIntervalSeconds: 30,
  maxIntervalSeconds: 600,
  capacityPerMinute: 630,
};

/** `open` projects with open operations (weight 0 of their own), and groups of the others. */
const fleet = (open: number, weights: readonly (readonly [count: number, weight: number])[]) => ({
  projects: [
    ...Array.from({ length: open }, () => ({ cost: 1, weight: 0, open: true })),
    ...weights.flatMap(([count, weight]) =>
      Array.from({ length: count }, () => ({ cost: 1, weight })),
    ),
  ],
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
    expect(intervalFor(plan, 0, true)).toBe(5);
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
    const busy = intervalFor(plan, 4);
    // Open operations weigh as 256 fresh ones: eight times as often as the busy ones.
    expect(intervalFor(plan, 0, true)).toBeCloseTo(intervalFor(plan, OPEN_WEIGHT));
    expect(busy / intervalFor(plan, 0, true)).toBeCloseTo(
      Math.sqrt((OPEN_WEIGHT + IDLE_WEIGHT) / (4 + IDLE_WEIGHT)),
    );
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
      open: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(project, { maxLength: 300 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 600 }),
        fc.integer({ min: 1, max: 7200 }),
        fc.integer({ min: 1, max: 100_000 }),
        (projects, fastInterval, baseInterval, maxInterval, capacityPerMinute) => {
          const input: ActivityPlanInput = {
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
          // More activity (open operations count as `OPEN_WEIGHT` at least), and open
          // operations besides, is never polled less often; none more often than the fast
          // interval.
          const interval = (p: (typeof projects)[number]) => intervalFor(plan, p.weight, p.open);
          for (const more of projects) {
            for (const less of projects) {
              const heavier =
                plannedWeight(more.weight, more.open) >= plannedWeight(less.weight, less.open);
              if (heavier && (more.open || !less.open)) {
                expect(interval(more)).toBeLessThanOrEqual(interval(less) * (1 + 1e-9));
              }
            }
          }
          for (const p of projects) {
            expect(intervalFor(plan, p.weight, true)).toBeLessThanOrEqual(
              intervalFor(plan, p.weight, false) * (1 + 1e-9),
            );
            expect(interval(p)).toBeGreaterThanOrEqual(input.fastIntervalSeconds * (1 - 1e-9));
          }
          const max = Math.max(maxInterval, baseInterval);
          const cost = projects.reduce((sum, p) => sum + p.cost, 0);
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
