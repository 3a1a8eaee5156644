/**
 * What the compute probe (`src/computes/`) found of each endpoint's compute, as it reports it
 * through the daemon's observer and as the project views keep it for the metrics and the
 * status page: the latest reading of the compute's current start, the probe's own health, why
 * it is or is not reading the compute now, and the advice.
 */

/** Why a probe failed: a bounded set, used as a metric label. */
export const PROBE_FAILURE_REASONS = [
  /** The role or its password was refused. */
  "auth",
  /** The database does not exist. */
  "no_database",
  /** The role may not read the file cache view. */
  "permission",
  /** There is no file cache view: the extension is not installed. */
  "no_extension",
  /** The view lacks one of the columns it should have. */
  "view_columns",
  /** The answer is not what the view gives: not one row, or a value that is not a count. */
  "unexpected_answer",
  /** The compute did not answer: refused, reset, no route, no address, or no answer in time. */
  "unreachable",
  /** TLS could not be set up: the server has none, or its certificate does not check out. */
  "tls",
  /** A statement did not finish within the timeout. */
  "timeout",
  /** The compute has no connection left for the probe, or is starting or stopping. */
  "unavailable",
  "other",
] as const;
export type ProbeFailureReason = (typeof PROBE_FAILURE_REASONS)[number];

/** Why a larger compute is advised: the file cache, or the connections. */
export const ADVICE_REASONS = ["file_cache", "connections"] as const;
export type AdviceReason = (typeof ADVICE_REASONS)[number];

/**
 * Where the probe stands with a compute, and so whether it reads it now:
 * - `idle`: the latest listing says the endpoint is not active: it is never connected to;
 * - `waiting`: active, its first reading since it started is due;
 * - `following`: others were active at the latest reading: it is read again every interval;
 * - `quiet`: nobody else was active at the latest reading: it is not read again before it
 *   starts again, so that the probe never keeps it awake on its own;
 * - `backoff`: the latest reading failed: the next waits, longer after each failure.
 */
export type ComputeProbeState = "idle" | "waiting" | "following" | "quiet" | "backoff";

/** One successful reading of a compute. */
export interface ComputeReading {
  /** When it was read (epoch ms). */
  readonly atMs: number;
  /** When the compute started, as far as the reading tells (epoch ms). */
  readonly startedAtMs: number;
  /** `file_cache_hit_ratio`, 0 to 100; undefined before the cache has been read from. */
  readonly hitRatio: number | undefined;
  readonly hits: number;
  readonly misses: number;
  /** `file_cache_used`, as the view gives it. */
  readonly used: number;
  readonly writes: number;
  /** Client sessions other than the probe's own and those of the ignored roles and names. */
  readonly connections: number;
}

/** A run of failed probes of a compute, from the first. */
export interface ProbeFailure {
  readonly reason: ProbeFailureReason;
  /** The latest failure's message, without the password. */
  readonly message: string;
  /** When the first of the run failed (epoch ms). */
  readonly sinceMs: number;
  readonly count: number;
}

/** What is known of one endpoint's compute. */
export interface ComputeView {
  readonly endpointId: string;
  readonly state: ComputeProbeState;
  /** The latest reading of the compute's current start, if any. */
  readonly reading: ComputeReading | undefined;
  /** The latest probe succeeded; undefined before the first. */
  readonly up: boolean | undefined;
  /** The latest successful probe (epoch ms), if any. */
  readonly lastSuccessMs: number | undefined;
  /** The current run of failed probes; undefined once one succeeds. */
  readonly failure: ProbeFailure | undefined;
  /** The reasons a larger compute is advised now (none: not advised). */
  readonly advised: readonly AdviceReason[];
}

/** The outcome of one probe, for the counters. */
export type ProbeOutcome =
  { readonly ok: true } | { readonly ok: false; readonly reason: ProbeFailureReason };
