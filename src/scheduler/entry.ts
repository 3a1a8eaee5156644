/**
 * One project as the scheduler keeps it: its lane and cost, when its poll and its endpoint
 * listing are due, its last poll, its recent activity, whether it is slow, refused or backing
 * off from failed polls, and whether its job runs now. The parts share the entries: the job writes what its steps said,
 * planning reads them for the project's due times, dispatch queues them by those times.
 */
import type { Lane } from "./budget.js";
import type { ErrorBackoff } from "./error-backoff.js";
import type { Refusal } from "./refusals.js";

/** A project's last poll, as its next one is planned from. */
export interface LastPoll {
  /** When it started (monotonic ms): what "unpolled for" and `maxInterval` count from. */
  readonly startMs: number;
  /** When it ended: what the next interval counts from (activity strategy). */
  readonly endMs: number;
  /** The jitter drawn at its end: the next interval is the plan's times this. */
  readonly spread: number;
}

export interface Entry {
  readonly id: string;
  lane: Lane;
  requestsPerPoll: number | undefined;
  nextPollMs: number;
  /** Its last poll (undefined before the first). */
  lastPoll: LastPoll | undefined;
  nextEndpointsMs: number;
  busy: boolean;
  /** Its last job timed out (see `slowShare`). */
  slow: boolean;
  /** The API refuses the project: it is tried again at `retryAtMs` (see `refusals.ts`). */
  refusal: Refusal | undefined;
  /**
   * Its polls fail on the API's side: the next is due at `retryAtMs` (see `error-backoff.ts`).
   */
  errorBackoff: ErrorBackoff | undefined;
  /**
   * Its recent activity: the operations its polls found, each weighing less as it ages (see
   * `activityWeight`), as of `activityAtMs` (the API's clock, see `activity.ts`).
   */
  activity: number;
  activityAtMs: number;
  /** When it was last nudged (monotonic ms). */
  lastNudgeMs: number | undefined;
  /** It has not been described yet (or the last try failed): describe it after its next poll. */
  describe: boolean;
  /** The due time it is queued at (`Infinity` while its job runs): older copies are skipped. */
  queuedAt: number;
}

/** A project that joins: first poll and listing at the times given, nothing known of it yet. */
export function newEntry(id: string, nextPollMs: number, nextEndpointsMs: number): Entry {
  return {
    id,
    lane: "base",
    requestsPerPoll: undefined,
    nextPollMs,
    lastPoll: undefined,
    nextEndpointsMs,
    busy: false,
    slow: false,
    refusal: undefined,
    errorBackoff: undefined,
    activity: 0,
    activityAtMs: 0,
    lastNudgeMs: undefined,
    describe: true,
    queuedAt: Infinity,
  };
}
