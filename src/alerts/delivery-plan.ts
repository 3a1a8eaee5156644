/**
 * The notifier's decisions, as pure functions: which alerts of which project a sink sends next,
 * which are too old to keep trying, and how long to wait after a failure.
 */
import type { OutboxEntry } from "../store/index.js";

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
