/**
 * The attempts a poll saw end: each arrival of an operation at an end status that the tracker
 * counted (an `ended` transition), numbered as the service counts its tries, so that the same
 * attempt always gets the same number, however the polls fell (docs/opentelemetry.md).
 *
 * Every arrival at `failed` or `error` raises `failures_count`. An operation read in `failed` or
 * `error` with `failures_count` F is in its F-th attempt (the first when the service did not raise
 * the count); one read in any other status is in attempt F + 1. Failures that fell between two
 * reads are the attempts just before it.
 */
import type { EndStatus } from "../contract/index.js";
import type { OperationSnapshot, Transition } from "./transitions.js";

/** One attempt of an operation that ended, as a span tells of it. */
export interface EndedAttempt {
  readonly op: OperationSnapshot;
  readonly status: EndStatus;
  /** 1 for the first attempt; the retry after the n-th failure is attempt n + 1. */
  readonly attempt: number;
  /** When it ended (epoch ms, the API's clock): `updated_at` when read in that status, else the
   * tracker's bound (the last retry, else `updated_at`). */
  readonly endMs: number;
}

/**
 * The attempt an operation is in when read in `status` with `failuresCount` (the header's rule):
 * the one place it is written, so that a span's attempt and the attempt a failure alert tells of
 * (the platform incident's links, `alerts/rules/incident-span.ts`) and `wait`'s spans are always
 * the same number.
 */
export function attemptOf(status: string, failuresCount: number): number {
  return isFailure(status) ? Math.max(failuresCount, 1) : failuresCount + 1;
}

/** The end statuses an attempt fails in, each raising `failures_count` (a span's ERROR). */
export function isFailure(status: string): boolean {
  return status === "failed" || status === "error";
}

/** The attempts the `ended` transitions of a poll tell of, in the order found. */
export function endedAttempts(transitions: readonly Transition[]): EndedAttempt[] {
  // The arrival read directly is the last `ended` of its operation in a status it is read in.
  const lastEnded = new Map<string, Transition>();
  for (const t of transitions) if (t.kind === "ended") lastEnded.set(t.op.id, t);
  const out: EndedAttempt[] = [];
  for (const t of transitions) {
    if (t.kind !== "ended") continue;
    const { op } = t;
    const current = attemptOf(op.status, op.failuresCount);
    if (t.status === op.status && lastEnded.get(op.id) === t) {
      out.push({ op, status: t.status, attempt: current, endMs: op.updatedAtMs });
      continue;
    }
    const endMs = op.createdAtMs + t.durationSeconds * 1000;
    for (let before = t.count; before >= 1; before--) {
      const attempt = current - before;
      if (attempt >= 1) out.push({ op, status: t.status, attempt, endMs });
    }
  }
  return out;
}
