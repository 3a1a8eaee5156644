/**
 * The activity-aware plan: pure arithmetic that gives each project its poll interval within the
 * request budget. While the budget holds every project at its interval, projects with open
 * operations are polled at the fast interval and the others at the base interval. When it
 * cannot, the budget is shared by activity: every project has a weight, its recent activity
 * (its operations, each counting less as it ages; at least `OPEN_WEIGHT` while some are open),
 * and a project of weight w is polled every `scale / sqrt(w + IDLE_WEIGHT)` seconds, within
 * [fast interval, maxInterval], with the smallest `scale` the budget allows. Polling each project
 * in proportion to the square root of its rate of operations is what keeps the mean wait between
 * a failure and the poll that sees it smallest for a given number of polls: the busiest projects
 * and those with open operations are polled as often as the fast interval allows, idle ones
 * (weight 0) wait longest, none beyond `maxInterval` while the budget allows it.
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

/**
 * The least weight of a project with open operations: 256 fresh operations', so that it is
 * polled sixteen times as often as a project with one, as often as the busiest. An open
 * operation ends within seconds or minutes, and may fail as it ends.
 */
export const OPEN_WEIGHT = 256;

export interface ActivityPlanInput {
  /**
   * Each project: what one poll costs, its weight (0 when idle), and whether it has open
   * operations.
   */
  readonly projects: readonly {
    readonly cost: number;
    readonly weight: number;
    readonly open?: boolean;
  }[];
  readonly fastIntervalSeconds: number;
  readonly baseIntervalSeconds: number;
  /** The longest any project should wait between polls. */
  readonly maxIntervalSeconds: number;
  /** Requests per minute the polls may spend. */
  readonly capacityPerMinute: number;
}

export interface ActivityPlan {
  /**
   * While the budget holds every project at its interval: the interval of the projects with
   * open operations (the fast interval); undefined when the budget is shared by weight.
   */
  readonly openSeconds: number | undefined;
  /** The others: `scale / sqrt(weight + IDLE_WEIGHT)`, within [minSeconds, maxSeconds]. */
  readonly scale: number;
  readonly minSeconds: number;
  readonly maxSeconds: number;
  /** The budget could not keep every project within `maxIntervalSeconds`. */
  readonly beyondMax: boolean;
}

/** The weight a project is planned with: at least `OPEN_WEIGHT` while it has open operations. */
export function plannedWeight(weight: number, open = false): number {
  const w = Math.max(0, weight);
  return open ? Math.max(w, OPEN_WEIGHT) : w;
}

/** Seconds between two polls of a project of `weight`, with open operations or not. */
export function intervalFor(plan: ActivityPlan, weight: number, open = false): number {
  if (open && plan.openSeconds !== undefined) return plan.openSeconds;
  const raw = plan.scale / Math.sqrt(plannedWeight(weight, open) + IDLE_WEIGHT);
  return Math.min(plan.maxSeconds, Math.max(plan.minSeconds, raw));
}

/** Requests per minute the polls cost under `plan`. */
export function planDemandPerMinute(input: ActivityPlanInput, plan: ActivityPlan): number {
  let perSecond = 0;
  for (const p of input.projects) perSecond += p.cost / intervalFor(plan, p.weight, p.open);
  return perSecond * 60;
}

/** Bisection steps for the scale: far finer than the one-second tick. */
const STEPS = 60;

export function planActivity(input: ActivityPlanInput): ActivityPlan {
  const capacity = input.capacityPerMinute / 60;
  const base = input.baseIntervalSeconds;
  const fast = Math.min(input.fastIntervalSeconds, base);
  const max = Math.max(input.maxIntervalSeconds, base);
  // Projects of one planned weight cost alike: an idle fleet is one group.
  const groups = new Map<number, number>();
  let total = 0;
  let heaviest = 0;
  let atIntervals = 0;
  for (const p of input.projects) {
    const weight = plannedWeight(p.weight, p.open);
    groups.set(weight, (groups.get(weight) ?? 0) + p.cost);
    total += p.cost;
    heaviest = Math.max(heaviest, weight);
    atIntervals += p.cost / (p.open === true ? fast : base);
  }
  if (atIntervals <= capacity) {
    return { openSeconds: fast, scale: 0, minSeconds: base, maxSeconds: max, beyondMax: false };
  }
  if (total / max <= capacity) return sharedByWeight(groups, heaviest, fast, max, capacity);
  // Not even `max` for all fits: every project at one interval, the one the budget allows.
  const one = capacity > 0 ? total / capacity : Infinity;
  return { openSeconds: undefined, scale: one, minSeconds: one, maxSeconds: one, beyondMax: true };
}

/**
 * The budget shared by weight, from the fast interval to `max`: the smallest scale the budget
 * allows (at `high` every project waits `max`). `groups` holds the cost of the projects of each
 * planned weight; `capacity` is in requests per second.
 */
function sharedByWeight(
  groups: ReadonlyMap<number, number>,
  heaviest: number,
  fast: number,
  max: number,
  capacity: number,
): ActivityPlan {
  const plan = (scale: number): ActivityPlan => ({
    openSeconds: undefined,
    scale,
    minSeconds: fast,
    maxSeconds: max,
    beyondMax: false,
  });
  const demand = (scale: number): number => {
    let perSecond = 0;
    for (const [weight, cost] of groups) perSecond += cost / intervalFor(plan(scale), weight);
    return perSecond;
  };
  let low = 0;
  let high = max * Math.sqrt(heaviest + IDLE_WEIGHT);
  for (let i = 0; i < STEPS; i++) {
    const mid = (low + high) / 2;
    if (demand(mid) <= capacity) high = mid;
    else low = mid;
  }
  return plan(high);
}
