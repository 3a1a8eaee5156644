/**
 * Counter totals: what the transitions of a poll add to the persisted counters. Pure; the
 * metrics module renders these totals, so a counter is exactly what was committed.
 */
import type { Totals } from "../store/index.js";
import type { Transition } from "./transitions.js";

/**
 * Upper bounds of the operation-duration buckets, in seconds: 0.1 s to one hour. Changing them
 * makes the histogram of older state files unusable (see `restoreTotals`).
 */
export const DURATION_BUCKETS_SECONDS: readonly number[] = [
  0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600,
];

export function emptyTotals(): Totals {
  return {
    durationBuckets: [...DURATION_BUCKETS_SECONDS],
    arrivals: [],
    retries: {},
    endpointStarts: {},
    endpointSuspends: {},
  };
}

/**
 * Brings totals read from an older state file in line with this build: when the bucket bounds
 * differ, the per-bucket counts cannot be re-divided, so they restart from zero (counts and
 * sums are kept). Returns the totals and whether that happened.
 */
export function restoreTotals(totals: Totals): { totals: Totals; bucketsReset: boolean } {
  const same =
    totals.durationBuckets.length === DURATION_BUCKETS_SECONDS.length &&
    totals.durationBuckets.every((b, i) => b === DURATION_BUCKETS_SECONDS[i]);
  if (same) return { totals, bucketsReset: false };
  return {
    totals: {
      ...totals,
      durationBuckets: [...DURATION_BUCKETS_SECONDS],
      arrivals: totals.arrivals.map((a) => ({ ...a, buckets: zeroBuckets() })),
    },
    bucketsReset: true,
  };
}

/** Index of the bucket a duration falls in (the last index is +Inf). */
export function bucketIndex(seconds: number): number {
  const i = DURATION_BUCKETS_SECONDS.findIndex((bound) => seconds <= bound);
  return i === -1 ? DURATION_BUCKETS_SECONDS.length : i;
}

/** Returns new totals with the effect of `transitions` added; `totals` is left untouched. */
export function addTransitions(totals: Totals, transitions: readonly Transition[]): Totals {
  if (transitions.length === 0) return totals;
  const arrivals = new Map(totals.arrivals.map((a) => [key(a.action, a.status), a]));
  const retries = { ...totals.retries };
  const endpointStarts = { ...totals.endpointStarts };
  const endpointSuspends = { ...totals.endpointSuspends };

  for (const t of transitions) {
    if (t.kind === "retried") {
      retries[t.op.action] = (retries[t.op.action] ?? 0) + t.by;
    } else if (t.kind === "ended") {
      const k = key(t.op.action, t.status);
      const prev = arrivals.get(k) ?? {
        action: t.op.action,
        status: t.status,
        count: 0,
        durationSum: 0,
        buckets: zeroBuckets(),
      };
      const buckets = [...prev.buckets];
      const b = bucketIndex(t.durationSeconds);
      buckets[b] = (buckets[b] ?? 0) + t.count;
      arrivals.set(k, {
        ...prev,
        count: prev.count + t.count,
        durationSum: prev.durationSum + t.durationSeconds * t.count,
        buckets,
      });
      const endpoint = t.op.endpointId;
      if (t.status === "finished" && endpoint !== undefined) {
        if (t.op.action === "start_compute") {
          endpointStarts[endpoint] = (endpointStarts[endpoint] ?? 0) + 1;
        } else if (t.op.action === "suspend_compute") {
          endpointSuspends[endpoint] = (endpointSuspends[endpoint] ?? 0) + 1;
        }
      }
    }
  }
  return {
    durationBuckets: totals.durationBuckets,
    arrivals: [...arrivals.values()],
    retries,
    endpointStarts,
    endpointSuspends,
  };
}

function zeroBuckets(): number[] {
  return new Array<number>(DURATION_BUCKETS_SECONDS.length + 1).fill(0);
}

function key(action: string, status: string): string {
  return JSON.stringify([action, status]);
}
