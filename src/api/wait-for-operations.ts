import type { Operation, OperationStatus } from "../contract/index.js";
import type { Clock } from "./clock.js";

export interface WaitOptions {
  /** Pause between polls. Default 5000 ms, the seed's suggested poll interval. */
  readonly intervalMs?: number;
  /** Give up after this long. Default 300000 ms (the official SDK's timeout). */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

export interface WaitResult {
  /** Ended as finished or skipped. */
  readonly succeeded: readonly Operation[];
  /** Ended as failed, error or cancelled. */
  readonly failed: readonly Operation[];
  /** Still open (or in a status nobody documents) when the timeout struck; empty otherwise. */
  readonly pending: readonly Operation[];
  readonly timedOut: boolean;
}

export type OperationOutcome = "succeeded" | "failed" | "pending";

/**
 * The official SDK's view of a status: finished and skipped succeeded; failed, error and
 * cancelled failed (a failed operation may still be retried by the service, but a waiter that
 * blocks a dependent request should not wait for that). Anything else, including statuses no
 * document names yet, is still pending.
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

const WAIT_DEFAULTS = { intervalMs: 5_000, timeoutMs: 300_000 } as const;

/**
 * Polls every operation that has not ended, each interval, until all have ended or the timeout
 * strikes; operations that had ended are not fetched again. Errors of `fetchOperation` (after
 * the client's own retries) propagate.
 */
export async function waitForOperations(
  fetchOperation: (operationId: string, signal: AbortSignal | undefined) => Promise<Operation>,
  clock: Clock,
  operations: readonly Operation[],
  options: WaitOptions = {},
): Promise<WaitResult> {
  const intervalMs = options.intervalMs ?? WAIT_DEFAULTS.intervalMs;
  const deadline = clock.now() + (options.timeoutMs ?? WAIT_DEFAULTS.timeoutMs);
  const latest = new Map(operations.map((op) => [op.id, op]));
  const isPending = (op: Operation): boolean => operationOutcome(op.status) === "pending";
  let pending = [...latest.values()].filter(isPending);
  while (pending.length > 0) {
    const remaining = deadline - clock.now();
    if (remaining <= 0) break;
    await clock.sleep(Math.min(intervalMs, remaining), options.signal);
    const polled = await Promise.all(pending.map((op) => fetchOperation(op.id, options.signal)));
    for (const op of polled) latest.set(op.id, op);
    pending = polled.filter(isPending);
  }
  const all = [...latest.values()];
  return {
    succeeded: all.filter((op) => operationOutcome(op.status) === "succeeded"),
    failed: all.filter((op) => operationOutcome(op.status) === "failed"),
    pending,
    timedOut: pending.length > 0,
  };
}
