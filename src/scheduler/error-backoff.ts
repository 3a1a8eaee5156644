/**
 * Backoff for a project whose polls fail on the API's side, as pure decisions. A poll that
 * failed after its retries with a server error (5xx), a timeout or an answer that could not be
 * read or broke the contract (the daemon says which: `JobOutcome.failed`; 404, 403 and 401 are
 * refusals, `refusals.ts`, and a 429 is the rate limiter's) makes the project's next poll wait
 * twice its interval, doubling with each such poll in a row up to a bound
 * (`poll.errorBackoffMax`), each wait shortened by a random share so that projects failing
 * together do not come back together. The first poll that is not such a failure ends it. While
 * it lasts, the project costs the budget what its backoff costs, not a share of the plan.
 */
import type { JobOutcome } from "./jobs.js";
import type { Refusal } from "./refusals.js";

/** How a poll failed on the API's side: what backs its project off. */
export type FailureKind = "server_error" | "timeout" | "invalid_response";

/** The longest wait between two polls of a failing project, by default (5 minutes). */
export const ERROR_BACKOFF_MAX_MS = 300_000;

/** The largest share of a wait its jitter takes off. */
export const ERROR_BACKOFF_JITTER = 0.25;

export interface ErrorBackoff {
  /** How the latest poll failed. */
  readonly reason: FailureKind;
  /** Failed polls in a row. */
  readonly count: number;
  /** When the next poll is due (monotonic ms). */
  readonly retryAtMs: number;
  /** The wait before it. */
  readonly delayMs: number;
  /** Requests the latest failed poll made, its retries included. */
  readonly requests: number;
}

/**
 * The wait after the `count`-th failed poll in a row: `baseMs` (the project's interval) doubled
 * `count` times, at most `maxMs`, less up to `ERROR_BACKOFF_JITTER` of it by `random` (in
 * [0, 1)); never shorter than `baseMs`.
 */
export function errorBackoffDelayMs(
  count: number,
  baseMs: number,
  maxMs: number,
  random: number,
): number {
  const doubled = Math.min(maxMs, Math.max(1, baseMs) * 2 ** Math.max(1, count));
  return Math.max(baseMs, doubled * (1 - ERROR_BACKOFF_JITTER * random));
}

/**
 * The project's backoff after a job: unchanged when the job did not poll; one more failure when
 * its poll failed on the API's side; ended by any other poll (answered, refused, or failed
 * otherwise: each has its own handling).
 */
export function errorBackoffAfter(
  previous: ErrorBackoff | undefined,
  poll: { readonly polled: boolean; readonly outcome: JobOutcome | undefined },
  nowMs: number,
  delay: { readonly baseMs: number; readonly maxMs: number; readonly random: number },
): ErrorBackoff | undefined {
  if (!poll.polled) return previous;
  const reason = poll.outcome?.failed;
  if (reason === undefined) return undefined;
  const count = (previous?.count ?? 0) + 1;
  const delayMs = errorBackoffDelayMs(count, delay.baseMs, delay.maxMs, delay.random);
  const requests = Math.max(1, poll.outcome?.requests ?? 1);
  return { reason, count, retryAtMs: nowMs + delayMs, delayMs, requests };
}

/** Requests per minute a backing-off project costs: its failed poll's, once per wait. */
export function backoffPerMinute(backoff: ErrorBackoff): number {
  return (backoff.requests * 60_000) / Math.max(1, backoff.delayMs);
}

/** Why a project is polled with backoff instead of at its interval. */
export type BackoffReason = "refused" | FailureKind;

/** A project polled with backoff: why, since how many tries, and when its next is. */
export interface ProjectBackoff {
  readonly reason: BackoffReason;
  readonly count: number;
  /** Monotonic ms. */
  readonly retryAtMs: number;
}

/** What a project's entry holds of its backoffs (`Entry`). */
export interface Backoffs {
  readonly id: string;
  readonly refusal: Refusal | undefined;
  readonly errorBackoff: ErrorBackoff | undefined;
}

/** The project's backoff, if it has one: its refusal's first (it decides the next poll). */
export function backoffOf(entry: Backoffs): ProjectBackoff | undefined {
  if (entry.refusal !== undefined) return { reason: "refused", ...entry.refusal };
  const failing = entry.errorBackoff;
  if (failing === undefined) return undefined;
  return { reason: failing.reason, count: failing.count, retryAtMs: failing.retryAtMs };
}

/** Every project polled with backoff now, by id. */
export function projectBackoffs(entries: Iterable<Backoffs>): Map<string, ProjectBackoff> {
  const out = new Map<string, ProjectBackoff>();
  for (const entry of entries) {
    const backoff = backoffOf(entry);
    if (backoff !== undefined) out.set(entry.id, backoff);
  }
  return out;
}
