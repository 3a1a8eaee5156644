/**
 * The tracker: a pure function from (what was committed about an operation, a fresh record of
 * it, the time) to (what to remember now, the transitions in between). It holds the accounting
 * rules of invariant 1 in docs/design.md (every arrival at an end status counted once) and does
 * no I/O.
 */
import { isEndStatus, type EndStatus, type Operation } from "../contract/index.js";
import type { OperationSnapshot, Transition } from "./transitions.js";
import { createdAtMs, updatedAtMs } from "./timestamps.js";

/** What the engine remembers about an operation it still follows. */
export interface TrackedOperation extends OperationSnapshot {
  /** An open-too-long alert was raised for it. */
  readonly stuck: boolean;
  /** The status it was in when it was found stuck (names that alert). */
  readonly stuckStatus?: string | undefined;
  /** It has failed at least once (a later finish is a recovery). */
  readonly failed: boolean;
  /**
   * For a `failed` operation: stop watching for a retry after this time (the API's clock, epoch
   * ms).
   */
  readonly watchUntilMs: number | undefined;
}

export interface TrackerOptions {
  /** Seconds an operation of this action may stay open before it counts as stuck. */
  readonly stuckAfterSeconds: (action: string) => number;
  /** How long a `failed` operation stays watched in case the service retries it. */
  readonly watchFailedSeconds: number;
}

export interface Observation {
  /** The tracked operation after this record, or undefined when it needs no following. */
  readonly next: TrackedOperation | undefined;
  readonly transitions: Transition[];
}

/** End statuses after which an operation can no longer change. `failed` may be retried. */
const FINAL_STATUSES: ReadonlySet<string> = new Set(["finished", "error", "cancelled", "skipped"]);

/**
 * How often the service has retried an operation: every failure it moved on from. A failure
 * the operation still sits in (`failed`, or the final `error`) has not been retried yet. Counted
 * from the record itself, so the total does not depend on when polls happen to read it.
 */
export function retriesSoFar(op: Pick<OperationSnapshot, "status" | "failuresCount">): number {
  const waiting = op.status === "failed" || op.status === "error" ? 1 : 0;
  return Math.max(0, op.failuresCount - waiting);
}

/** Turns a record into the snapshot the engine keeps. Invalid timestamps fell at validation. */
export function snapshotOf(record: Operation): OperationSnapshot {
  const created = createdAtMs(record);
  const updated = updatedAtMs(record);
  return {
    id: record.id,
    projectId: record.project_id,
    branchId: record.branch_id ?? undefined,
    endpointId: record.endpoint_id ?? undefined,
    action: record.action,
    status: record.status,
    failuresCount: record.failures_count,
    createdAtMs: created,
    updatedAtMs: updated,
    durationMs: record.total_duration_ms ?? Math.max(0, updated - created),
    error: record.error ?? undefined,
  };
}

/**
 * Starts following an operation found open on the first start (or outside a backfill window):
 * nothing about its past is counted, but its future arrivals will be.
 */
export function baseline(record: Operation, options: TrackerOptions): TrackedOperation | undefined {
  const op = snapshotOf(record);
  if (FINAL_STATUSES.has(op.status)) return undefined;
  return {
    ...op,
    stuck: false,
    failed: op.failuresCount > 0,
    watchUntilMs:
      op.status === "failed" ? op.updatedAtMs + options.watchFailedSeconds * 1000 : undefined,
  };
}

/**
 * Compares a fresh record with what was committed (`previous`, undefined for an operation never
 * seen) and returns what changed.
 *
 * Arrivals at end statuses:
 * - `error`, `finished`, `cancelled` and `skipped` are final: each is counted when the status is
 *   first seen.
 * - `failed` may repeat (the service retries and may fail again). Every arrival at `failed` or
 *   `error` raises `failures_count`, so the growth of `failures_count` (less one for a new
 *   `error`) is the number of arrivals at `failed`, including those that fell between two
 *   reads; and a newly seen `failed` counts at least once, for a service that does not raise
 *   the count.
 * - An arrival that was not seen directly is observed in the duration histogram with the best
 *   known bound: from creation to the last retry (`retry_at`) or else to the last update.
 */
export function observe(
  previous: TrackedOperation | undefined,
  record: Operation,
  nowMs: number,
  options: TrackerOptions,
): Observation {
  const op = snapshotOf(record);
  const transitions: Transition[] = [];
  const before = previous?.status;

  if (previous === undefined) transitions.push({ kind: "new", op });
  else if (before !== op.status)
    transitions.push({ kind: "status_changed", op, from: before ?? "" });

  const growth = Math.max(0, op.failuresCount - (previous?.failuresCount ?? 0));
  const retries = retriesSoFar(op) - (previous === undefined ? 0 : retriesSoFar(previous));
  if (retries > 0) transitions.push({ kind: "retried", op, by: retries });

  const newFinal = FINAL_STATUSES.has(op.status) && before !== op.status;
  const newError = newFinal && op.status === "error";
  const newFailed = op.status === "failed" && before !== "failed";
  const failedArrivals = Math.max(growth - (newError ? 1 : 0), newFailed ? 1 : 0);

  if (failedArrivals > 0) {
    // The arrival seen now (status failed) has its own duration; earlier ones are inferred.
    const inferredMs =
      (typeof record.retry_at === "string" ? Date.parse(record.retry_at) : op.updatedAtMs) -
      op.createdAtMs;
    const seenNow = op.status === "failed" ? 1 : 0;
    if (failedArrivals - seenNow > 0) {
      transitions.push(ended(op, "failed", failedArrivals - seenNow, Math.max(0, inferredMs)));
    }
    if (seenNow > 0) transitions.push(ended(op, "failed", 1, op.durationMs));
  }
  if (newFinal) transitions.push(ended(op, op.status as EndStatus, 1, op.durationMs));

  const failed = (previous?.failed ?? false) || failedArrivals > 0 || newError;
  // A finish after failures resolves the last failure (raised with the final failures count);
  // a finish after being stuck, the stuck alert.
  if (op.status === "finished" && (previous?.failed === true || failedArrivals > 0)) {
    transitions.push({
      kind: "recovered",
      op,
      after: "failed",
      resolves: { status: "failed", failuresCount: op.failuresCount },
    });
  } else if (op.status === "finished" && previous?.stuck === true) {
    transitions.push({
      kind: "recovered",
      op,
      after: "stuck",
      resolves: {
        status: previous.stuckStatus ?? previous.status,
        failuresCount: previous.failuresCount,
      },
    });
  }

  if (FINAL_STATUSES.has(op.status)) return { next: undefined, transitions };

  let stuck = previous?.stuck ?? false;
  let stuckStatus = previous?.stuckStatus;
  const openMs = nowMs - op.createdAtMs;
  if (!stuck && !isEndStatus(op.status) && openMs > options.stuckAfterSeconds(op.action) * 1000) {
    stuck = true;
    stuckStatus = op.status;
    transitions.push({ kind: "stuck", op, openSeconds: Math.floor(openMs / 1000) });
  }

  const watchUntilMs =
    op.status === "failed"
      ? newFailed || growth > 0
        ? nowMs + options.watchFailedSeconds * 1000
        : previous?.watchUntilMs
      : undefined;
  return { next: { ...op, stuck, stuckStatus, failed, watchUntilMs }, transitions };
}

/**
 * Re-checks a tracked operation that was not read in this poll (its record did not change
 * enough to matter, or it could not be reached): raises `stuck` when its time has come.
 */
export function age(
  tracked: TrackedOperation,
  nowMs: number,
  options: TrackerOptions,
): Observation {
  if (tracked.stuck || isEndStatus(tracked.status)) return { next: tracked, transitions: [] };
  const openMs = nowMs - tracked.createdAtMs;
  if (openMs <= options.stuckAfterSeconds(tracked.action) * 1000) {
    return { next: tracked, transitions: [] };
  }
  return {
    next: { ...tracked, stuck: true, stuckStatus: tracked.status },
    transitions: [{ kind: "stuck", op: tracked, openSeconds: Math.floor(openMs / 1000) }],
  };
}

/** True when a tracked `failed` operation has been watched long enough to let go. */
export function watchExpired(tracked: TrackedOperation, nowMs: number): boolean {
  return tracked.watchUntilMs !== undefined && nowMs >= tracked.watchUntilMs;
}

function ended(
  op: OperationSnapshot,
  status: EndStatus,
  count: number,
  durationMs: number,
): Transition {
  return { kind: "ended", op, status, count, durationSeconds: durationMs / 1000 };
}
