/**
 * What a waiter decides about the operations it follows, as pure functions of their records and
 * the time: whether a record is a status change, whether an operation is still to be read (open,
 * or `failed` within the retry grace), and what the final records add up to. No I/O.
 */
import type { Operation, OperationStatus } from "../contract/index.js";

export type OperationOutcome = "succeeded" | "failed" | "pending";

/**
 * The official SDK's view of a status: finished and skipped succeeded; failed, error and
 * cancelled failed (a failed operation may still be retried by the service: see the retry
 * grace). Anything else, including statuses no document names yet, is still pending.
 */
export function operationOutcome(status: OperationStatus): OperationOutcome {
  switch (status) {
    case "finished":
    case "skipped":
      return "succeeded";
    case "failed":
    case "error":
    case "cancelled":
      return "failed";
    default:
      return "pending";
  }
}

/** What a waiter knows of one operation: its latest record, and since when it sits in `failed`. */
export interface Watch {
  readonly record: Operation;
  /**
   * When (the waiter's monotonic clock, ms) the operation was first seen in its current `failed`.
   */
  readonly failedSinceMs: number | undefined;
}

/** A record that is the first one read of its operation, or whose status differs from before. */
export interface StatusChange {
  readonly operation: Operation;
  /** The status before; undefined for the first record read. */
  readonly from: OperationStatus | undefined;
}

/** The watch after reading `record` at `nowMs`, and the status change it is, if any. */
export function observe(
  previous: Watch | undefined,
  record: Operation,
  nowMs: number,
): { readonly watch: Watch; readonly change: StatusChange | undefined } {
  const from = previous?.record.status;
  const changed = previous === undefined || from !== record.status;
  // A retry that failed again (failures_count grew) starts a new grace, like a new failure.
  const failedAgain =
    previous !== undefined && record.failures_count > previous.record.failures_count;
  const failedSinceMs =
    record.status !== "failed"
      ? undefined
      : changed || failedAgain || previous.failedSinceMs === undefined
        ? nowMs
        : previous.failedSinceMs;
  return {
    watch: { record, failedSinceMs },
    change: changed ? { operation: record, from } : undefined,
  };
}

/**
 * Whether the operation is still to be read: it has not ended (an undocumented status has not
 * either), or it is `failed` and the service may still retry it within `retryGraceMs`.
 */
export function isStillWatched(watch: Watch, nowMs: number, retryGraceMs: number): boolean {
  const outcome = operationOutcome(watch.record.status);
  if (outcome === "pending") return true;
  return (
    watch.record.status === "failed" &&
    watch.failedSinceMs !== undefined &&
    nowMs < watch.failedSinceMs + retryGraceMs
  );
}

export interface WaitResult {
  /** Ended as finished or skipped. */
  readonly succeeded: readonly Operation[];
  /**
   * Ended as failed, error or cancelled (a `failed` one's retry grace ran out, or the wait did).
   */
  readonly failed: readonly Operation[];
  /**
   * Still open (or in a status nobody documents) when the timeout struck or the wait was
   * interrupted; empty otherwise.
   */
  readonly pending: readonly Operation[];
  readonly timedOut: boolean;
  /** The wait was stopped (its signal aborted) before every operation ended. */
  readonly interrupted: boolean;
}

/** The final records, sorted by outcome (in the order the watches are given). */
export function summarise(watches: Iterable<Watch>, interrupted = false): WaitResult {
  const all = [...watches].map((w) => w.record);
  const having = (outcome: OperationOutcome) =>
    all.filter((op) => operationOutcome(op.status) === outcome);
  const pending = having("pending");
  return {
    succeeded: having("succeeded"),
    failed: having("failed"),
    pending,
    timedOut: pending.length > 0 && !interrupted,
    interrupted: pending.length > 0 && interrupted,
  };
}

/**
 * What a wait comes to: `failed` when any operation ended failed (a failure is known even if
 * others were still open when the time ran out), else `timed_out` when any is still open, else
 * `succeeded`.
 */
export type WaitVerdict = "succeeded" | "failed" | "timed_out" | "interrupted";

/** A failure outranks everything: once one operation failed, the outcome is known. */
export function waitVerdict(result: WaitResult): WaitVerdict {
  if (result.failed.length > 0) return "failed";
  if (result.interrupted) return "interrupted";
  if (result.pending.length > 0) return "timed_out";
  return "succeeded";
}
