/**
 * When a larger compute is advised: a pure rule over a compute's readings in one start.
 *
 * - `file_cache`: the file cache hit ratio (since the start, as the view gives it) stays below
 *   `hitRatio` percent in every reading for at least `windowMs`. Below about 99% the working
 *   set of a transactional workload is not cached: a larger size has a larger cache.
 * - `connections`: the client sessions stay at or above `connectionsShare` of
 *   `max_connections` in every reading for at least `windowMs`. `max_connections` follows the
 *   minimum size of the autoscaling range and does not grow when the compute scales up.
 *
 * Readings in the first `warmupMs` after the compute started do not count: its cache is cold,
 * and clients reconnecting after a start come in a rush. A reading past its threshold starts
 * the run of a reason; one that is not ends it; a new start begins afresh.
 */
import type { AdviceReason } from "../sync/index.js";

export interface AdviceSettings {
  readonly warmupMs: number;
  readonly windowMs: number;
  /** Percent. */
  readonly hitRatio: number;
  /** Share of `max_connections`, 0 to 1. */
  readonly connectionsShare: number;
}

/** One reading, as the advice reads it. */
export interface AdviceSample {
  /** When it was read (monotonic ms). */
  readonly atMs: number;
  /** The compute's start it belongs to (any value that differs between starts). */
  readonly start: number;
  /** How long the compute had run when it was read (ms). */
  readonly uptimeMs: number;
  /** Percent; undefined before the cache has been read from. */
  readonly hitRatio: number | undefined;
  readonly connections: number;
  /** Undefined for a size outside the table. */
  readonly maxConnections: number | undefined;
}

/** The runs of readings past each threshold, in one start. */
export interface AdviceTrack {
  readonly start: number;
  /** Since when (monotonic ms) every counted reading's ratio has been below the threshold. */
  readonly lowRatioSinceMs: number | undefined;
  /** Since when every counted reading's connections have been at or above the threshold. */
  readonly busySinceMs: number | undefined;
}

export interface Advice {
  readonly track: AdviceTrack;
  /** The reasons a larger compute is advised after this reading, in `ADVICE_REASONS` order. */
  readonly advised: readonly AdviceReason[];
}

export function advise(
  track: AdviceTrack | undefined,
  sample: AdviceSample,
  settings: AdviceSettings,
): Advice {
  const same = track !== undefined && track.start === sample.start;
  const warm = sample.uptimeMs >= settings.warmupMs;
  const since = (previous: number | undefined, past: boolean): number | undefined =>
    warm && past ? (same ? (previous ?? sample.atMs) : sample.atMs) : undefined;
  const lowRatio = sample.hitRatio !== undefined && sample.hitRatio < settings.hitRatio;
  const busy =
    sample.maxConnections !== undefined &&
    sample.connections >= settings.connectionsShare * sample.maxConnections;
  const next: AdviceTrack = {
    start: sample.start,
    lowRatioSinceMs: since(track?.lowRatioSinceMs, lowRatio),
    busySinceMs: since(track?.busySinceMs, busy),
  };
  const held = (from: number | undefined) =>
    from !== undefined && sample.atMs - from >= settings.windowMs;
  const advised: AdviceReason[] = [];
  if (held(next.lowRatioSinceMs)) advised.push("file_cache");
  if (held(next.busySinceMs)) advised.push("connections");
  return { track: next, advised };
}
