/**
 * The scheduler's request budget: pure arithmetic that decides how far poll intervals must
 * stretch so that the expected request rate stays within the API's rate limit.
 */

/** The two polling lanes: projects with open operations are polled faster. */
export type Lane = "fast" | "base";

export interface BudgetInput {
  /** Per project: its lane and the requests its polls have cost on average (at least 1). */
  readonly projects: readonly { readonly lane: Lane; readonly requestsPerPoll: number }[];
  readonly baseIntervalSeconds: number;
  readonly fastIntervalSeconds: number;
  /** Interval of the endpoint listing (one request per project), 0 when off. */
  readonly endpointsIntervalSeconds: number;
  /** The shared limiter's sustained rate. */
  readonly requestsPerMinute: number;
  /** Share of the rate the scheduler plans to use; the rest absorbs retries and bursts. */
  readonly headroom: number;
  /**
   * Requests per minute taken outside the plan: the endpoint listings that operations trigger,
   * as measured, and the polls of projects backing off from failures, as their backoff costs.
   * They come first, the intervals stretch to fit the rest (at most half the budget goes to
   * them).
   */
  readonly unplannedPerMinute?: number;
}

export interface Budget {
  /** Requests per minute the projects would cost at their configured intervals. */
  readonly demandPerMinute: number;
  /** Requests per minute the scheduler plans to spend. */
  readonly capacityPerMinute: number;
  /** Factor (>= 1) by which every interval is stretched to fit. */
  readonly stretch: number;
}

/**
 * Intervals stretch evenly: every project's interval is multiplied by the same factor, so no
 * project starves while others keep their pace.
 */
export function planBudget(input: BudgetInput): Budget {
  let demand = 0;
  for (const p of input.projects) {
    const interval = p.lane === "fast" ? input.fastIntervalSeconds : input.baseIntervalSeconds;
    demand += (Math.max(1, p.requestsPerPoll) * 60) / interval;
    if (input.endpointsIntervalSeconds > 0) demand += 60 / input.endpointsIntervalSeconds;
  }
  const capacity = input.requestsPerMinute * input.headroom;
  const planned = capacity - unplannedShare(input.unplannedPerMinute ?? 0, capacity);
  return {
    demandPerMinute: demand,
    capacityPerMinute: capacity,
    stretch: demand > planned && planned > 0 ? demand / planned : 1,
  };
}

/** What the requests outside the plan take of `capacity`: as measured, at most half. */
export function unplannedShare(unplannedPerMinute: number, capacity: number): number {
  return Math.min(Math.max(0, unplannedPerMinute), capacity / 2);
}

/**
 * When a project is due next: one (stretched) interval from now, moved by up to `jitter` of
 * the interval either way so that polls of many projects spread out instead of bursting.
 * `random` is a number in [0, 1).
 */
export function nextDueMs(
  nowMs: number,
  intervalSeconds: number,
  stretch: number,
  jitter: number,
  random: number,
): number {
  const interval = intervalSeconds * 1000 * stretch;
  return nowMs + interval * (1 + jitter * (2 * random - 1));
}

/**
 * The first due time of a project that joins: spread over one interval, so that a daemon that
 * starts with thousands of projects does not poll them all in the first second.
 */
export function firstDueMs(nowMs: number, intervalSeconds: number, random: number): number {
  return nowMs + intervalSeconds * 1000 * random;
}

/** Moving average of requests per poll, weighting the newest poll by `weight`. */
export function updateCost(previous: number | undefined, requests: number, weight = 0.2): number {
  return previous === undefined ? requests : previous + weight * (requests - previous);
}
