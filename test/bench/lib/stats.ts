/** Summaries of repeated measurements: median and spread. */

/** The q-quantile (0..1) of `values` by linear interpolation; NaN for none. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  const a = sorted[low] ?? NaN;
  const b = sorted[high] ?? NaN;
  return a + (b - a) * (position - low);
}

export const median = (values: readonly number[]): number => quantile(values, 0.5);

/** Median of several runs with their spread: min, max, and the relative spread (max-min)/median. */
export interface Summary {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  /** (max - min) / median: 0.1 means the runs lay within 10% of the median's size. */
  readonly spread: number;
  readonly runs: readonly number[];
}

export function summarize(runs: readonly number[]): Summary {
  const m = median(runs);
  const min = Math.min(...runs);
  const max = Math.max(...runs);
  return { median: m, min, max, spread: m === 0 ? 0 : (max - min) / m, runs: [...runs] };
}

/** Percentiles of one run's samples (latencies, delays). */
export interface Percentiles {
  readonly count: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

export function percentiles(samples: readonly number[]): Percentiles {
  return {
    count: samples.length,
    p50: quantile(samples, 0.5),
    p90: quantile(samples, 0.9),
    p99: quantile(samples, 0.99),
    max: samples.length === 0 ? NaN : Math.max(...samples),
  };
}

/** Rounds for reports: 3 significant digits, integers kept whole. */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value) || value === 0) return value;
  if (Math.abs(value) >= 10 ** digits) return Math.round(value);
  const scale = 10 ** (digits - 1 - Math.floor(Math.log10(Math.abs(value))));
  return Math.round(value * scale) / scale;
}
