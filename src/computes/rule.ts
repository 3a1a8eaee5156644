/**
 * When the probe may connect to a compute: a pure rule over what the latest endpoint listing
 * says, what the latest reading saw and the monotonic clock. Every connection counts as
 * activity that keeps a compute from suspending, so the rule holds two promises:
 *
 * - **Never wake a compute.** The probe connects only to an endpoint whose latest listing says
 *   it is active, and only while something says it is up: the listing that showed it active
 *   is at most `freshMs` old (a compute that just started does not suspend that soon), or
 *   others' activity at the latest reading keeps it up for a while yet. A failed probe is
 *   retried after a doubling backoff only while that activity still keeps the compute up:
 *   never on the strength of a listing alone, never into an endpoint that has become idle.
 * - **Never keep a compute awake.** A compute is read once when it is seen active (a client
 *   woke it), and again only while others use it: each reading looks for client sessions other
 *   than the probe's own that are busy, or whose last activity is later than the previous
 *   reading (`pg_stat_activity`). A reading that finds only its own activity makes the
 *   compute `quiet`: it is not read again before it starts again. The next reading is due one
 *   interval after the latest activity of others the reading saw, and earlier when the
 *   compute's auto-suspend delay would otherwise run out first: the last reading of a compute
 *   that others have left is at most one interval after they left, so that it suspends at most
 *   one interval (and one probe) after its delay. A retry after a failure may add up to one
 *   more delay, never more: it is made only while others' activity keeps the compute up.
 */
import type { ComputeProbeState } from "../sync/index.js";

export interface RuleSettings {
  /** How often a compute others use is read. */
  readonly intervalMs: number;
  /** How old a listing that says active may be for a first reading, or a retry, to rely on it. */
  readonly freshMs: number;
  /**
   * The longest a probe takes to set up its session (its connect timeout): the compute must be
   * known to stay up that long when the probe starts, so that it never connects to one that is
   * suspending.
   */
  readonly probeMs: number;
  /** The longest wait between failed probes. */
  readonly maxBackoffMs: number;
}

/** What the latest listing says of the endpoint, and when it came (monotonic ms). */
export interface ListingFacts {
  /** `current_state` is `active` and the endpoint is not disabled. */
  readonly active: boolean;
  /** The compute's start as the listing gives it (`started_at`), when it does. */
  readonly startedAt: string | undefined;
  /** The auto-suspend delay; null: the compute never suspends itself. */
  readonly suspendDelayMs: number | null;
  /** When the listing was received. */
  readonly listedAtMs: number;
}

/**
 * What a failed probe did on the compute. A probe that failed before its session was set up
 * (unreachable, TLS, the password refused) was no activity there; one that failed after was,
 * and its first statement may have seen others' activity all the same.
 */
export type FailedProbe =
  | { readonly session: false }
  | {
      readonly session: true;
      /**
       * When the sessions' statement answered: the latest activity of others it saw (as for
       * `afterReading`), or undefined when it saw none. Absent when it did not answer.
       */
      readonly others?: { readonly activeAtMs: number | undefined };
    };

/** What the rule remembers of one endpoint. */
export interface ProbeTrack {
  readonly state: ComputeProbeState;
  /** The start the probe saw the compute in (`started_at`), if the listing gives one. */
  readonly startedAt: string | undefined;
  /** The next probe is due at this time (monotonic ms). */
  readonly dueMs: number;
  /** Others' activity keeps the compute up until this time; -Infinity when none is known. */
  readonly upUntilMs: number;
  /** Failed probes in a row, in this start. */
  readonly failures: number;
  /** When the latest failure happened (monotonic ms); -Infinity when none did in this start. */
  readonly failedAtMs: number;
  /**
   * In `backoff`: a listing received after the failure that says active is enough to try
   * again (for a compute that never suspends itself, which nothing can keep awake).
   */
  readonly retryOnListing: boolean;
}

const IDLE: ProbeTrack = {
  state: "idle",
  startedAt: undefined,
  dueMs: Infinity,
  upUntilMs: -Infinity,
  failures: 0,
  failedAtMs: -Infinity,
  retryOnListing: false,
};

/**
 * The track after a listing: an endpoint that is not active is `idle` (never connected to); one
 * seen active after being idle, or in another start, is `waiting` for its first reading.
 */
export function listed(track: ProbeTrack | undefined, facts: ListingFacts): ProbeTrack {
  if (!facts.active) return IDLE;
  const current = track ?? IDLE;
  const restarted =
    facts.startedAt !== undefined &&
    current.startedAt !== undefined &&
    facts.startedAt !== current.startedAt;
  if (current.state !== "idle" && !restarted) {
    return current.startedAt === undefined && facts.startedAt !== undefined
      ? { ...current, startedAt: facts.startedAt }
      : current;
  }
  return { ...IDLE, state: "waiting", startedAt: facts.startedAt, dueMs: facts.listedAtMs };
}

/** Whether the probe may connect to the compute now. */
export function mayProbe(
  track: ProbeTrack,
  facts: ListingFacts,
  nowMs: number,
  settings: RuleSettings,
): boolean {
  if (!facts.active || nowMs < track.dueMs) return false;
  const keptUp = nowMs + settings.probeMs <= track.upUntilMs;
  const freshListing = nowMs - facts.listedAtMs <= settings.freshMs;
  switch (track.state) {
    case "idle":
    case "quiet":
      return false;
    case "waiting":
      return freshListing || keptUp;
    case "following":
      return keptUp;
    case "backoff":
      return (
        keptUp || (track.retryOnListing && freshListing && facts.listedAtMs > track.failedAtMs)
      );
  }
}

/**
 * The track after a successful reading at `nowMs`. `othersActiveAtMs`: the latest activity of
 * others the reading saw since the previous one (monotonic ms), or undefined when it saw none.
 */
export function afterReading(
  track: ProbeTrack,
  facts: ListingFacts,
  nowMs: number,
  othersActiveAtMs: number | undefined,
  settings: RuleSettings,
): ProbeTrack {
  const settled = { ...track, failures: 0, failedAtMs: -Infinity, retryOnListing: false };
  return { ...settled, ...follow(facts, nowMs, othersActiveAtMs, settings, "following") };
}

/**
 * The track after a failed probe at `nowMs`. A failure before any session (unreachable, TLS,
 * the password refused) was no activity on the compute: it is tried again one interval later,
 * twice as long after each further failure (at most `maxBackoffMs`), while others' activity
 * known from the latest reading keeps the compute up through the try. A failure after its
 * session counts as the probe's own activity: when its first statement saw others active, it
 * is tried again on the same schedule as after a reading; otherwise (or when they were not)
 * the compute is `quiet` until it starts again. A compute that never suspends itself cannot
 * be kept awake: it is tried again after the backoff on any newer listing that says active.
 */
export function afterFailure(
  track: ProbeTrack,
  facts: ListingFacts,
  nowMs: number,
  failed: FailedProbe,
  settings: RuleSettings,
): ProbeTrack {
  const failures = track.failures + 1;
  const waitMs = Math.min(settings.maxBackoffMs, settings.intervalMs * 2 ** (failures - 1));
  const base = { ...track, state: "backoff" as const, failures, failedAtMs: nowMs };
  const retryOnListing = facts.suspendDelayMs === null;
  if (!failed.session || retryOnListing) {
    return { ...base, dueMs: nowMs + waitMs, retryOnListing };
  }
  if (failed.others === undefined) {
    // Its own activity was the last the probe may add: another try would keep the compute up
    // longer than one interval past what it knows of others.
    return { ...base, state: "quiet", dueMs: Infinity, upUntilMs: -Infinity, retryOnListing };
  }
  return {
    ...base,
    retryOnListing,
    ...follow(facts, nowMs, failed.others.activeAtMs, settings, "backoff"),
  };
}

/**
 * When to read next after a session that saw others active at `othersActiveAtMs`: one interval
 * after their latest activity, or sooner if the compute might suspend before then; `quiet`
 * when they were not active, or when it would suspend too soon to be read again.
 */
function follow(
  facts: ListingFacts,
  nowMs: number,
  othersActiveAtMs: number | undefined,
  settings: RuleSettings,
  state: "following" | "backoff",
): Pick<ProbeTrack, "state" | "dueMs" | "upUntilMs"> {
  const quiet = { state: "quiet" as const, dueMs: Infinity, upUntilMs: -Infinity };
  if (othersActiveAtMs === undefined) return quiet;
  const upUntilMs =
    facts.suspendDelayMs === null ? Infinity : othersActiveAtMs + facts.suspendDelayMs;
  // Read again one interval after the others' latest activity (at most one interval from now),
  // or sooner if the compute might suspend before then: a compute idle apart from the probe
  // is last read at most one interval after the others' last activity.
  const dueMs = Math.min(othersActiveAtMs + settings.intervalMs, upUntilMs - settings.probeMs);
  if (dueMs <= nowMs) return quiet;
  return { state, dueMs, upUntilMs };
}
