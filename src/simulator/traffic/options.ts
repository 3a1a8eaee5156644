/** What the traffic generator produces; every field has a default. */
export interface TrafficOptions {
  /** Projects the generator creates and keeps busy (default 20). */
  readonly projects?: number;
  /**
   * Activities per simulated minute across all its projects (default 30). Each activity starts
   * one or more operations (a connection to an idle compute: one start_compute; a branch: a
   * create_branch and maybe a start_compute; a resize: three), and the control plane adds its
   * own (auto-suspends, availability checks).
   */
  readonly operationsPerMinute?: number;
  /** Share of operations that fail (default 0.05). */
  readonly failureShare?: number;
  /** Share of failures that are retried and then finish (default 0.5). */
  readonly retryShare?: number;
  /** Share of operations that take 20 to 60 times their normal duration (default 0.03). */
  readonly slowShare?: number;
  /** Share of operations that are cancelled while running (default 0.02). */
  readonly cancellationShare?: number;
  /** Share of its projects on the paid plan (default 0.5). */
  readonly paidShare?: number;
  /**
   * How unevenly activity falls on the projects: the exponent of a Zipf-like choice, where
   * the project of activity rank r is picked with weight 1 / r^skew (default 0: every project
   * alike). Near 1, a few projects bring most of the operations, as in a fleet with a database
   * per tenant; `zipfExponentFor` gives the exponent for a shape such as "5% of the projects
   * bring 80% of the operations". Ranks are dealt to the projects at random.
   */
  readonly skew?: number;
  /**
   * How long the fleet has run when the simulator starts, in simulated seconds (default 0): its
   * projects are created this long before the start time, and the logs hold that span's
   * traffic, auto-suspends and availability checks, as a fleet's do when a monitor first reads
   * them.
   */
  readonly historySeconds?: number;
  /** Seed of the traffic's own random stream (default: derived from the simulator's seed). */
  readonly seed?: number;
}

export type ResolvedTrafficOptions = Required<Omit<TrafficOptions, "seed">> & {
  readonly seed: number | undefined;
};

const DEFAULTS = {
  projects: 20,
  operationsPerMinute: 30,
  failureShare: 0.05,
  retryShare: 0.5,
  slowShare: 0.03,
  cancellationShare: 0.02,
  paidShare: 0.5,
  skew: 0,
  historySeconds: 0,
} as const;

/** The longest history a simulator starts with: a simulated week. */
export const MAX_HISTORY_SECONDS = 604_800;

const SHARES = [
  "failureShare",
  "retryShare",
  "slowShare",
  "cancellationShare",
  "paidShare",
] as const;

/** Applies the defaults and rejects impossible values with a RangeError naming the field. */
export function resolveTrafficOptions(options: TrafficOptions): ResolvedTrafficOptions {
  const resolved: ResolvedTrafficOptions = { ...DEFAULTS, ...options, seed: options.seed };
  if (!Number.isInteger(resolved.projects) || resolved.projects < 1) {
    throw new RangeError("traffic.projects must be a positive integer");
  }
  if (!(resolved.operationsPerMinute > 0) || !Number.isFinite(resolved.operationsPerMinute)) {
    throw new RangeError("traffic.operationsPerMinute must be a positive number");
  }
  if (!(resolved.skew >= 0 && Number.isFinite(resolved.skew))) {
    throw new RangeError("traffic.skew must be a non-negative number");
  }
  const history = resolved.historySeconds;
  if (!(history >= 0 && history <= MAX_HISTORY_SECONDS)) {
    throw new RangeError(
      `traffic.historySeconds must be within 0..${MAX_HISTORY_SECONDS} (a simulated week)`,
    );
  }
  for (const share of SHARES) {
    const value = resolved[share];
    if (!(value >= 0 && value <= 1)) throw new RangeError(`traffic.${share} must be within 0..1`);
  }
  if (resolved.failureShare + resolved.cancellationShare > 1) {
    throw new RangeError("traffic.failureShare + traffic.cancellationShare must not exceed 1");
  }
  return resolved;
}
