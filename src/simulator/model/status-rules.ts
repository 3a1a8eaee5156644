import { isOpenStatus } from "../../contract/index.js";

/**
 * The rules that tie an operation's counters to its status history. They are pure so that the
 * log, the scripted operations and the tests all share one definition:
 *
 * - `failures_count` grows by one on every arrival at `failed` or `error`;
 * - a move from `failed` back to `running` is a retry and sets `retry_at` to that instant;
 * - `error` is shown while the status is `failed` or `error` (the last failure's message).
 */

/** The message used when a failure arrives without one. */
export const DEFAULT_FAILURE_MESSAGE = "operation failed (simulated)";

export function isFailureStatus(status: string): boolean {
  return status === "failed" || status === "error";
}

export function failuresAfter(previousFailures: number, nextStatus: string): number {
  return isFailureStatus(nextStatus) ? previousFailures + 1 : previousFailures;
}

export function isRetry(previousStatus: string | undefined, nextStatus: string): boolean {
  return previousStatus === "failed" && nextStatus === "running";
}

export function showsError(status: string): boolean {
  return isFailureStatus(status);
}

/**
 * Whether an operation in `status` holds its endpoint, so that calls changing the endpoint
 * answer 423 Locked. Availability checks only read, so they never hold it.
 */
export function holdsEndpoint(action: string, status: string): boolean {
  return action !== "check_availability" && isOpenStatus(status);
}
