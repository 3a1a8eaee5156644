/**
 * The activity-aware plan: pure arithmetic that gives each tier of projects its poll interval
 * within the request budget. Projects with open operations (`fast`) keep the fast interval,
 * those with recent operations (`active`) the base interval, and when the budget cannot hold
 * every project at its interval the idle ones are stretched first, then the active ones, then
 * the fast ones, none beyond `maxInterval` while the budget allows it. A fleet where a few
 * projects bring most of the operations thus spends its requests where failures happen, and
 * no project waits longer than `maxInterval`.
 */

/** How recently a project has shown activity, fastest first. */
export type Tier = "fast" | "active" | "idle";

export const TIERS: readonly Tier[] = ["fast", "active", "idle"];

export interface TierPlanInput {
  /** Per tier: the requests one poll of each of its projects costs, summed over the tier. */
  readonly cost: Readonly<Record<Tier, number>>;
  readonly fastIntervalSeconds: number;
  readonly baseIntervalSeconds: number;
  /** The longest any project should wait between polls. */
  readonly maxIntervalSeconds: number;
  /** Requests per minute the polls may spend. */
  readonly capacityPerMinute: number;
}

export interface TierPlan {
  /** Seconds between two polls of a project of each tier. */
  readonly intervals: Readonly<Record<Tier, number>>;
  /** The budget could not keep every project within `maxIntervalSeconds`. */
  readonly beyondMax: boolean;
}

/** Requests per minute the polls cost at `intervals`. */
export function tierDemandPerMinute(
  cost: Readonly<Record<Tier, number>>,
  intervals: Readonly<Record<Tier, number>>,
): number {
  return TIERS.reduce((sum, tier) => sum + (cost[tier] * 60) / intervals[tier], 0);
}

export function planTiers(input: TierPlanInput): TierPlan {
  const { cost } = input;
  const capacity = input.capacityPerMinute / 60;
  const floor: Record<Tier, number> = {
    fast: input.fastIntervalSeconds,
    active: input.baseIntervalSeconds,
    idle: input.baseIntervalSeconds,
  };
  const max = Math.max(input.maxIntervalSeconds, input.baseIntervalSeconds);
  const intervals = { ...floor };
  const perSecond = (tier: Tier): number => cost[tier] / intervals[tier];
  // Stretch the least active tier first, each within [its floor, max]; the ones before it keep
  // their floor, the ones after it are at max already.
  for (const tier of ["idle", "active", "fast"] as const) {
    const others = TIERS.filter((t) => t !== tier).reduce((sum, t) => sum + perSecond(t), 0);
    if (others + perSecond(tier) <= capacity) return { intervals, beyondMax: false };
    const left = capacity - others;
    const needed = left > 0 ? cost[tier] / left : Infinity;
    if (needed <= max) {
      intervals[tier] = Math.max(floor[tier], needed);
      return { intervals, beyondMax: false };
    }
    intervals[tier] = max;
  }
  // Not even `max` for all fits: every project at one interval, the one the budget allows.
  const total = TIERS.reduce((sum, t) => sum + cost[t], 0);
  const one = capacity > 0 ? total / capacity : Infinity;
  return { intervals: { fast: one, active: one, idle: one }, beyondMax: true };
}
