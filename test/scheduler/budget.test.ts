import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nextDueMs, planBudget, type Lane } from "../../src/scheduler/budget.js";

const base = {
  baseIntervalSeconds: 30,
  fastIntervalSeconds: 5,
  endpointsIntervalSeconds: 60,
  requestsPerMinute: 700,
  headroom: 0.9,
};

function projects(n: number, lane: Lane = "base", requestsPerPoll = 1) {
  return Array.from({ length: n }, () => ({ lane, requestsPerPoll }));
}

describe("request budget", () => {
  it("keeps configured intervals while the demand fits", () => {
    // 100 idle projects: 100 × 2/min polls + 100 × 1/min endpoint listings = 300/min.
    const budget = planBudget({ ...base, projects: projects(100) });
    expect(budget.demandPerMinute).toBeCloseTo(300);
    expect(budget.stretch).toBe(1);
  });

  it("stretches every interval by one factor when the demand exceeds the budget", () => {
    // 1,000 idle projects: 3,000/min against 630/min of capacity.
    const budget = planBudget({ ...base, projects: projects(1000) });
    expect(budget.capacityPerMinute).toBeCloseTo(630);
    expect(budget.stretch).toBeCloseTo(3000 / 630);
  });

  it("leaves room for the listings operations trigger, up to half the budget", () => {
    const budget = planBudget({ ...base, projects: projects(1000), unplannedPerMinute: 130 });
    expect(budget.stretch).toBeCloseTo(3000 / 500);
    const flooded = planBudget({ ...base, projects: projects(1000), unplannedPerMinute: 5000 });
    expect(flooded.stretch).toBeCloseTo(3000 / 315);
  });

  it("never plans more requests than the capacity", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            lane: fc.constantFrom<Lane>("fast", "base"),
            requestsPerPoll: fc.double({ min: 1, max: 20, noNaN: true }),
          }),
          { maxLength: 300 },
        ),
        (ps) => {
          const budget = planBudget({ ...base, projects: ps });
          expect(budget.stretch).toBeGreaterThanOrEqual(1);
          expect(budget.demandPerMinute / budget.stretch).toBeLessThanOrEqual(
            budget.capacityPerMinute + 1e-6,
          );
        },
      ),
    );
  });

  it("spreads due times within the jitter around one interval", () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 0.999, noNaN: true }), (random) => {
        const due = nextDueMs(1_000_000, 30, 2, 0.1, random);
        expect(due).toBeGreaterThanOrEqual(1_000_000 + 60_000 * 0.9);
        expect(due).toBeLessThanOrEqual(1_000_000 + 60_000 * 1.1);
      }),
    );
  });
});
