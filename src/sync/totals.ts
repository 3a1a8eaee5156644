/**
 * Counter totals: what the transitions of a poll add to the persisted counters. Pure; the
 * metrics module renders these totals, so a counter is exactly what was committed.
 */
import type { Totals } from "../store/index.js";
import type { Transition } from "./transitions.js";

type ArrivalTotals = Totals["arrivals"][number];

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

/**
 * Returns new totals with the effect of `transitions` added; `totals` is left untouched. An
 * arrival entry is copied the first time a transition touches it and updated in place after
 * that, so that a catch-up of thousands of arrivals does not copy an entry per arrival.
 */
export function addTransitions(totals: Totals, transitions: readonly Transition[]): Totals {
  if (transitions.length === 0) return totals;
  const arrivals = new Map<string, ArrivalTotals>();
  for (const a of totals.arrivals) arrivals.set(key(a.action, a.status), a);
  /** Entries that are this call's own copies (free to update). */
  const own = new Set<ArrivalTotals>();
  const retries = { ...totals.retries };
  const endpointStarts = { ...totals.endpointStarts };
  const endpointSuspends = { ...totals.endpointSuspends };

  for (const t of transitions) {
    if (t.kind === "retried") {
      retries[t.op.action] = (retries[t.op.action] ?? 0) + t.by;
    } else if (t.kind === "ended") {
      const k = key(t.op.action, t.status);
      let entry = arrivals.get(k);
      if (entry === undefined || !own.has(entry)) {
        entry =
          entry === undefined
            ? {
                action: t.op.action,
                status: t.status,
                count: 0,
                durationSum: 0,
                buckets: zeroBuckets(),
              }
            : { ...entry, buckets: [...entry.buckets] };
        own.add(entry);
        arrivals.set(k, entry);
      }
      const b = bucketIndex(t.durationSeconds);
      entry.buckets[b] = (entry.buckets[b] ?? 0) + t.count;
      entry.count += t.count;
      entry.durationSum += t.durationSeconds * t.count;
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

/** A key naming (action, status) unambiguously: the action's length, the action, the status. */
function key(action: string, status: string): string {
  return `${action.length}:${action}${status}`;
}
