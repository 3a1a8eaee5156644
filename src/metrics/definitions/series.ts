/**
 * What a family's value function yields: samples, histogram series and pauses between
 * projects; and a number as the exposition text writes it, for a value that is also a label.
 */

export type Labels = Readonly<Record<string, string>>;

/** One series of a counter or gauge. */
export interface Sample {
  readonly labels: Labels;
  readonly value: number;
}

/** One series of a histogram. */
export interface HistogramSeries {
  readonly labels: Labels;
  /** Observations per bucket, not cumulative, in the order of the family's bounds. */
  readonly buckets: readonly number[];
  readonly sum: number;
  /** All observations (the `+Inf` bucket). */
  readonly count: number;
}

/**
 * Yielded by a family across projects between two projects' worth of work: the rendering may
 * let the event loop run there, so that summing thousands of projects is not one long step.
 */
export const PAUSE: unique symbol = Symbol("pause");
export type Pause = typeof PAUSE;

/** A sample's value, a bucket's bound or a numeric label, as prom-client writes a value. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return "Nan";
  if (!Number.isFinite(value)) return value < 0 ? "-Inf" : "+Inf";
  return String(value);
}
