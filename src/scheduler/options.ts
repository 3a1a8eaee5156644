/** The scheduler's settings, as the daemon gives them for one account. */

/** How intervals follow the budget: by each project's activity, or one factor for all. */
export type PollStrategy = "activity" | "uniform";

export interface SchedulerOptions {
  readonly baseIntervalSeconds: number;
  readonly fastIntervalSeconds: number;
  /** 0 turns the endpoint listing off. */
  readonly endpointsIntervalSeconds: number;
  readonly jitter: number;
  readonly headroom: number;
  readonly requestsPerMinute: number;
  /** Jobs in flight at once, across projects. */
  readonly maxConcurrent: number;
  /** Default `activity`. */
  readonly strategy?: PollStrategy;
  /**
   * The longest a project should wait between polls (activity strategy); default twice the
   * interval that fits when every project is polled alike (`alikeIntervalSeconds`).
   */
  readonly maxIntervalSeconds?: number | undefined;
  /**
   * How long an operation counts towards a project's activity, by the API's clock (default 1 h):
   * its weight halves every quarter of it.
   */
  readonly activeWindowSeconds?: number;
  /** The longest wait between two polls of a project whose polls fail (default 300 s). */
  readonly errorBackoffMaxSeconds?: number;
  /** Monotonic time in ms (the process's `Clock.monotonic`). */
  readonly monotonic: () => number;
  readonly random?: () => number;
}
