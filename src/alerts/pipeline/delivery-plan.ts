/**
 * The delivery's decisions, as pure functions: which alerts of which project a sink sends next,
 * which are too old to keep trying, what an attempt's outcome leads to (and how long to wait
 * after a failure), and when a sink next has something to do.
 */
import type { OutboxEntry } from "../../store/index.js";
import type { SendResult } from "../sinks/sink.js";

export interface SinkPolicy {
  readonly name: string;
  /** Alerts of one project raised within this window go into one message. */
  readonly groupWindowMs: number;
  /** An alert not delivered this long after it was raised goes to the dead letters. */
  readonly maxAgeMs: number;
  /** Most alerts in one message. */
  readonly maxBatch: number;
}

/** A project's outbox, with when its deliveries to a sink may next be tried (after failures). */
export interface ProjectOutbox {
  readonly projectId: string;
  readonly outbox: readonly OutboxEntry[];
  /** The time (on `nowMs`'s axis) before which this project's deliveries wait (backoff). */
  readonly retryAtMs: number | undefined;
}

export interface Batch {
  readonly projectId: string;
  readonly entries: readonly OutboxEntry[];
}

/**
 * When an entry was raised, on the time axis of the `nowMs` it is compared with. By default its
 * stored wall time; the notifier measures on the monotonic clock (`entry-births.ts`).
 */
export type BirthOf = (entry: OutboxEntry) => number;

const storedBirth: BirthOf = (entry) => entry.createdAtMs;

/** Entries pending for `sink`, oldest first. */
export function pendingFor(outbox: readonly OutboxEntry[], sink: string): OutboxEntry[] {
  return outbox
    .filter((e) => e.pending.includes(sink))
    .sort((a, b) => a.createdAtMs - b.createdAtMs);
}

/** Entries pending for the sink that are older than its maximum age. */
export function expired(
  outbox: readonly OutboxEntry[],
  policy: SinkPolicy,
  nowMs: number,
  birthOf: BirthOf = storedBirth,
): OutboxEntry[] {
  return pendingFor(outbox, policy.name).filter((e) => nowMs - birthOf(e) >= policy.maxAgeMs);
}

/**
 * The next message for a sink: the project whose oldest pending alert is the oldest of all,
 * once that alert's grouping window has passed (so that alerts raised close together travel
 * together) and the project is not backing off; up to `maxBatch` of its alerts, oldest first
 * (a platform incident's alert alone).
 */
export function nextBatch(
  projects: readonly ProjectOutbox[],
  policy: SinkPolicy,
  nowMs: number,
  birthOf: BirthOf = storedBirth,
): Batch | undefined {
  let best: { projectId: string; entries: OutboxEntry[] } | undefined;
  for (const p of projects) {
    if (p.retryAtMs !== undefined && p.retryAtMs > nowMs) continue;
    const entries = pendingFor(p.outbox, policy.name);
    const oldest = entries[0];
    if (oldest === undefined || nowMs - birthOf(oldest) < policy.groupWindowMs) continue;
    if (best === undefined || oldest.createdAtMs < (best.entries[0]?.createdAtMs ?? Infinity)) {
      best = { projectId: p.projectId, entries };
    }
  }
  if (best === undefined) return undefined;
  // A platform incident's alert travels alone: it speaks for many projects, not the one
  // whose outbox carries it.
  const first = best.entries[0];
  const entries =
    first?.alert.kind === "platform_incident"
      ? [first]
      : best.entries.filter((e) => e.alert.kind !== "platform_incident");
  return { projectId: best.projectId, entries: entries.slice(0, policy.maxBatch) };
}

/**
 * How long to wait before the next attempt after `failures` consecutive failures: the
 * receiver's Retry-After when it sent one, else exponential backoff (1 s doubling, at most
 * 5 min) with full jitter. `random` is a number in [0, 1).
 */
export function retryDelayMs(
  failures: number,
  retryAfterMs: number | undefined,
  random: number,
): number {
  if (retryAfterMs !== undefined) return retryAfterMs;
  const window = Math.min(300_000, 1000 * 2 ** Math.max(0, failures - 1));
  return Math.max(100, Math.floor(window * random));
}

/** What a delivery attempt's outcome leads to. */
export type Settlement =
  /** Delivered: the alerts leave the sink's pending list (and join its firing set). */
  | { readonly kind: "acknowledge" }
  /** Refused for good: the alerts go to the dead letters, with `text` as the reason kept. */
  | { readonly kind: "dead_letter"; readonly text: string }
  /**
   * Tried again after `delayMs` (the `failures`-th failure in a row); `holdSink`: the receiver
   * asked for a pause (429), so the whole sink waits, not only this project.
   */
  | {
      readonly kind: "retry";
      readonly failures: number;
      readonly delayMs: number;
      readonly holdSink: boolean;
    };

/**
 * The settlement of an attempt that ended as `result`, after `failuresBefore` failures in a row
 * for the same project and sink; `random` is a number in [0, 1) for the backoff's jitter.
 */
export function settlement(result: SendResult, failuresBefore: number, random: number): Settlement {
  if (result.ok) return { kind: "acknowledge" };
  if (result.permanent) {
    return { kind: "dead_letter", text: result.deadLetterReason ?? result.reason };
  }
  const failures = failuresBefore + 1;
  return {
    kind: "retry",
    failures,
    delayMs: retryDelayMs(failures, result.retryAfterMs, random),
    holdSink: result.reason === "rate_limited",
  };
}

/** What a sink's lane waits on, on the monotonic clock. */
export interface LaneTimes {
  /** No message before this (the sink's pace, or a 429's pause). */
  readonly notBeforeMs: number;
  /** When the firing set is next sent again; undefined: nothing fires for the sink. */
  readonly refreshAtMs: number | undefined;
}

/**
 * When a sink's lane next has something to do, on `nowMs`'s axis: an alert reaches its maximum
 * age (whatever the pace), or, once the pace allows, a project's oldest pending alert leaves its
 * grouping window and backoff, or the firing set is due to be sent again. Undefined: nothing to
 * do until new work arrives.
 */
export function laneDueMs(
  projects: readonly ProjectOutbox[],
  policy: SinkPolicy,
  times: LaneTimes,
  birthOf: BirthOf = storedBirth,
): number | undefined {
  let expiry = Infinity;
  let ready = times.refreshAtMs ?? Infinity;
  for (const p of projects) {
    const oldest = pendingFor(p.outbox, policy.name)[0];
    if (oldest === undefined) continue;
    const born = birthOf(oldest);
    expiry = Math.min(expiry, born + policy.maxAgeMs);
    ready = Math.min(ready, Math.max(born + policy.groupWindowMs, p.retryAtMs ?? -Infinity));
  }
  const due = Math.min(expiry, ready === Infinity ? Infinity : Math.max(ready, times.notBeforeMs));
  return due === Infinity ? undefined : due;
}
