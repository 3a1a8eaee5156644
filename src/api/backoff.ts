/** Exponential backoff settings: the first retry waits up to `baseMs`, each later one doubles. */
export interface BackoffConfig {
  readonly baseMs: number;
  /** Upper bound of the doubling window. */
  readonly maxMs: number;
}

/**
 * "Full jitter" backoff: a delay drawn uniformly from [0, min(maxMs, baseMs × 2^(retry−1))).
 * Spreading retries over the whole window keeps many clients that failed together from
 * retrying together. `retry` counts from 1; `random` returns a value in [0, 1).
 */
export function fullJitterDelay(
  retry: number,
  config: BackoffConfig,
  random: () => number,
): number {
  // Bounding the exponent keeps 0 × 2^1024 (NaN) out; 2^60 ms already exceeds any cap.
  const doublings = Math.min(Math.max(0, retry - 1), 60);
  const window = Math.min(config.maxMs, config.baseMs * 2 ** doublings);
  return Math.floor(random() * window);
}
