/**
 * The activity-aware plan: pure arithmetic that gives each project its poll interval within the
 * request budget. Projects with open operations (`fast`) keep the fast interval, and while the
 * budget holds every other project at the base interval, they all keep it. When it cannot, the
 * budget is shared by activity: every other project has a weight, its recent activity
 * (operations found, each counting less as it ages), and a project of weight w is polled every
 * `scale / sqrt(w + IDLE_WEIGHT)` seconds, within [fast interval, maxInterval], with the smallest
 * `scale` the budget allows. Polling each project in proportion to the square root of its rate
 * of operations is what keeps the mean wait between a failure and the poll that sees it smallest
 * for a given number of polls: the busiest projects are polled as often as the fast interval,
 * idle ones (weight 0) wait longest, none beyond `maxInterval` while the budget allows it.
 */

/** How recently a project has shown activity, fastest first (the scheduler's lanes). */
export type Tier = "fast" | "active" | "idle";

export const TIERS: readonly Tier[] = ["fast", "active", "idle"];

/**
 * The least weight that makes a project active: one operation's, once it has aged by the active
 * window (see `activityWeight`).
 */
export const ACTIVE_WEIGHT = 1 / 16;

/**
 * The weight an idle project is planned with: a sixteenth of the interval of a project with
 * one fresh operation, so that idle projects reach `maxInterval` before busy ones give up much.
 */
export const IDLE_WEIGHT = 1 / 256;

/** How many half-lives of an operation's weight make up the active window. */
const HALF_LIVES_PER_WINDOW = 4;

/** An operation's weight after `ageMs`: 1 when new, `ACTIVE_WEIGHT` at the window's end. */
export function activityWeight(ageMs: number, activeWindowMs: number): number {
  return 2 ** ((-HALF_LIVES_PER_WINDOW * Math.max(0, ageMs)) / activeWindowMs);
}

export interface ActivityPlanInput {
  /** Requests one poll of each project with open operations costs, summed. */
  readonly fastCost: number;
  /** The other projects: what one poll costs, and the project's weight (0 when idle). */
  readonly projects: readonly { readonly cost: number; readonly weight: number }[];
  readonly fastIntervalSeconds: number;
  readonly baseIntervalSeconds: number;
  /** The longest any project should wait between polls. */
  readonly maxIntervalSeconds: number;
  /** Requests per minute the polls may spend. */
  readonly capacityPerMinute: number;
}

export interface ActivityPlan {
  /** Seconds between two polls of a project with open operations. */
  readonly fastSeconds: number;
  /** The others: `scale / sqrt(weight + IDLE_WEIGHT)`, within [minSeconds, maxSeconds]. */
  readonly scale: number;
  readonly minSeconds: number;
  readonly maxSeconds: number;
  /** The budget could not keep every project within `maxIntervalSeconds`. */
  readonly beyondMax: boolean;
}

/** Seconds between two polls of a project of `weight` (not one with open operations). */
export function intervalFor(plan: ActivityPlan, weight: number): number {
  const raw = plan.scale / Math.sqrt(Math.max(0, weight) + IDLE_WEIGHT);
  return Math.min(plan.maxSeconds, Math.max(plan.minSeconds, raw));
}

/** Requests per minute the polls cost under `plan`. */
export function planDemandPerMinute(input: ActivityPlanInput, plan: ActivityPlan): number {
  let perSecond = input.fastCost / plan.fastSeconds;
  for (const p of input.projects) perSecond += p.cost / intervalFor(plan, p.weight);
  return perSecond * 60;
}

/** Bisection steps for the scale: far finer than the one-second tick. */
const STEPS = 60;

export function planActivity(input: ActivityPlanInput): ActivityPlan {
  const capacity = input.capacityPerMinute / 60;
  const base = input.baseIntervalSeconds;
  const max = Math.max(input.maxIntervalSeconds, base);
  // Projects of one weight cost alike: an idle fleet is one group.
  const groups = new Map<number, number>();
  let total = 0;
  let heaviest = 0;
  for (const p of input.projects) {
    const weight = Math.max(0, p.weight);
    groups.set(weight, (groups.get(weight) ?? 0) + p.cost);
    total += p.cost;
    heaviest = Math.max(heaviest, weight);
  }
  const fastAtFloor = input.fastCost / input.fastIntervalSeconds;
  // Shared by activity, the others range from the fast interval to `max`.
  const plan = (scale: number, fastSeconds = input.fastIntervalSeconds): ActivityPlan => ({
    fastSeconds,
    scale,
    minSeconds: Math.min(input.fastIntervalSeconds, base),
    maxSeconds: max,
    beyondMax: false,
  });
  const demand = (scale: number): number => {
    let perSecond = 0;
    for (const [weight, cost] of groups) perSecond += cost / intervalFor(plan(scale), weight);
    return perSecond;
  };
  if (fastAtFloor + total / base <= capacity) return { ...plan(0), minSeconds: base };
  if (fastAtFloor + total / max <= capacity) {
    // The smallest scale the budget allows: at `high` every project waits `max`.
    let low = 0;
    let high = max * Math.sqrt(heaviest + IDLE_WEIGHT);
    for (let i = 0; i < STEPS; i++) {
      const mid = (low + high) / 2;
      if (fastAtFloor + demand(mid) <= capacity) high = mid;
      else low = mid;
    }
    return plan(high);
  }
  // Every other project at `max`; what is left goes to the fast lane, if it is enough.
  const left = capacity - total / max;
  const fastSeconds = left > 0 ? Math.max(input.fastIntervalSeconds, input.fastCost / left) : 0;
  if (left > 0 && fastSeconds <= max) return plan(Infinity, fastSeconds);
  // Not even `max` for all fits: every project at one interval, the one the budget allows.
  const one = capacity > 0 ? (total + input.fastCost) / capacity : Infinity;
  return { fastSeconds: one, scale: one, minSeconds: one, maxSeconds: one, beyondMax: true };
}
