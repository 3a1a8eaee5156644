/**
 * The plan of the moment, as pure arithmetic: the request budget of the projects planned
 * (`budget.ts`: not refused, not backing off), the intervals it allows under the strategy, and
 * `maxInterval`. What is not planned comes first: the listings that operations trigger (what
 * they took of late) and the polls of projects backing off from failures (what their backoff
 * costs). Under the activity strategy the endpoint listings keep the uniform plan's share; the
 * polls share the rest by activity (`activity-plan.ts`). Under `uniform` every interval
 * stretches by the budget's one factor.
 */
import { planActivity, type ActivityPlan } from "./activity-plan.js";
import { planBudget, unplannedShare, type Budget, type BudgetInput, type Lane } from "./budget.js";
import type { SchedulerOptions } from "./options.js";

/**
 * A project as the plan counts it (refused projects are not planned: they cost next to nothing;
 * nor are those backing off: their cost comes before the plan's).
 */
export interface PlannedProject {
  readonly lane: Lane;
  /** What its polls have cost on average (1 before its first). */
  readonly requestsPerPoll: number;
  /** Its recent activity now (0 when idle). */
  readonly weight: number;
}

export interface SchedulePlan {
  /** Demand, capacity and the stretch factor applied to intervals. */
  readonly budget: Budget;
  /** The intervals planned (the uniform strategy's: one for all but the fast lane). */
  readonly intervals: ActivityPlan;
  /** The longest a project waits between polls. */
  readonly maxIntervalSeconds: number;
}

/**
 * The plan for the `projects` planned, after `unplannedPerMinute`: the requests that come
 * before the plan (the listings operations trigger, the polls of projects backing off).
 */
export function planSchedule(
  options: SchedulerOptions,
  projects: readonly PlannedProject[],
  unplannedPerMinute: number,
): SchedulePlan {
  const budget = planBudget({ ...rates(options), projects, unplannedPerMinute });
  return options.strategy === "uniform"
    ? uniformPlan(options, budget)
    : activityPlan(options, projects, unplannedPerMinute, budget);
}

/** Every interval stretched by the budget's factor: the fast lane's, and one for the others. */
function uniformPlan(options: SchedulerOptions, budget: Budget): SchedulePlan {
  const fast = options.fastIntervalSeconds * budget.stretch;
  const others = options.baseIntervalSeconds * budget.stretch;
  return {
    budget,
    intervals: {
      openSeconds: fast,
      scale: 0,
      minSeconds: others,
      maxSeconds: others,
      beyondMax: false,
    },
    maxIntervalSeconds: others,
  };
}

/** The polls share what the listings leave, by activity, none beyond `maxInterval`. */
function activityPlan(
  options: SchedulerOptions,
  projects: readonly PlannedProject[],
  unplannedPerMinute: number,
  budget: Budget,
): SchedulePlan {
  const listings =
    (options.endpointsIntervalSeconds > 0
      ? (projects.length * 60) / (options.endpointsIntervalSeconds * budget.stretch)
      : 0) + unplannedShare(unplannedPerMinute, budget.capacityPerMinute);
  const maxIntervalSeconds =
    options.maxIntervalSeconds ?? 2 * alikeIntervalSeconds(options, projects);
  const intervals = planActivity({
    projects: projects.map((p) => ({
      cost: Math.max(1, p.requestsPerPoll),
      weight: p.weight,
      open: p.lane === "fast",
    })),
    fastIntervalSeconds: options.fastIntervalSeconds,
    baseIntervalSeconds: options.baseIntervalSeconds,
    maxIntervalSeconds,
    capacityPerMinute: Math.max(0, budget.capacityPerMinute - listings),
  });
  return { budget, intervals, maxIntervalSeconds };
}

/**
 * The interval that fits if every project were polled alike, none with open operations and no
 * listing triggered: what `maxInterval` defaults to twice of. It follows the fleet and the
 * budget, not the operations of the moment, so that the bound does not move under a burst.
 */
function alikeIntervalSeconds(
  options: SchedulerOptions,
  projects: readonly PlannedProject[],
): number {
  const alike = planBudget({
    ...rates(options),
    projects: projects.map((p) => ({ lane: "base", requestsPerPoll: p.requestsPerPoll })),
  });
  return options.baseIntervalSeconds * alike.stretch;
}

/** The budget's settings: the configured intervals and the rate limit. */
function rates(options: SchedulerOptions): Omit<BudgetInput, "projects" | "unplannedPerMinute"> {
  return {
    baseIntervalSeconds: options.baseIntervalSeconds,
    fastIntervalSeconds: options.fastIntervalSeconds,
    endpointsIntervalSeconds: options.endpointsIntervalSeconds,
    requestsPerMinute: options.requestsPerMinute,
    headroom: options.headroom,
  };
}
