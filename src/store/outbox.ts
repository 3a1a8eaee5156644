/**
 * The outbox's bookkeeping, as pure functions over a project's committed outbox: adding new
 * alerts (bounded), acknowledging deliveries, and moving alerts a sink gave up on to the dead
 * letters. Whoever commits the project's state applies them, so the outbox always changes in
 * the same atomic write as the rest of the state.
 */
import type { Alert } from "./alert-record.js";
import { addBounded } from "./bounded-list.js";
import type { DeadLetter, OutboxEntry } from "./project-state.js";

/** Most alerts one project's outbox holds; beyond it, new alerts are dropped and counted. */
export const DEFAULT_OUTBOX_LIMIT = 10_000;
/** Most dead letters one project keeps (the newest). */
export const DEAD_LETTER_LIMIT = 200;

/**
 * Adds entries not yet in the outbox. When the outbox is full, the newest alerts are the ones
 * dropped: the alerts already waiting were raised first and keep their place, and the drop is
 * reported so that it can be logged and counted.
 */
export function addToOutbox(
  outbox: readonly OutboxEntry[],
  entries: readonly OutboxEntry[],
  limit: number = DEFAULT_OUTBOX_LIMIT,
): { outbox: OutboxEntry[]; dropped: OutboxEntry[] } {
  const { list, dropped } = addBounded(outbox, entries, (e) => e.alert.id, limit);
  return { outbox: list, dropped };
}

/**
 * The alert as `sink` is sent it: a recovery names only the alerts it resolves that the sink was
 * sent (`resolvesBySink`), the first of them as `resolves`.
 */
export function alertForSink(entry: OutboxEntry, sink: string): Alert {
  const ids = entry.resolvesBySink?.[sink];
  if (ids === undefined) return entry.alert;
  const { alsoResolves: _all, ...alert } = entry.alert;
  const [first, ...rest] = ids;
  return {
    ...alert,
    ...(first === undefined ? {} : { resolves: first }),
    ...(rest.length === 0 ? {} : { alsoResolves: rest }),
  };
}

/** Marks alerts as delivered to `sink`; an entry with no sink left pending leaves the outbox. */
export function acknowledge(
  outbox: readonly OutboxEntry[],
  sink: string,
  alertIds: ReadonlySet<string>,
): OutboxEntry[] {
  return settle(outbox, sink, alertIds);
}

/** Moves alerts `sink` gave up on to the dead letters (newest kept, bounded). */
export function deadLetter(
  outbox: readonly OutboxEntry[],
  deadLetters: readonly DeadLetter[],
  sink: string,
  alertIds: ReadonlySet<string>,
  reason: string,
  nowMs: number,
): { outbox: OutboxEntry[]; deadLetters: DeadLetter[] } {
  const added = outbox
    .filter((e) => alertIds.has(e.alert.id) && e.pending.includes(sink))
    .map((e) => ({ alert: e.alert, sink, reason, atMs: nowMs }));
  return {
    outbox: settle(outbox, sink, alertIds),
    deadLetters: [...deadLetters, ...added].slice(-DEAD_LETTER_LIMIT),
  };
}

function settle(
  outbox: readonly OutboxEntry[],
  sink: string,
  alertIds: ReadonlySet<string>,
): OutboxEntry[] {
  const next: OutboxEntry[] = [];
  for (const entry of outbox) {
    if (!alertIds.has(entry.alert.id)) {
      next.push(entry);
      continue;
    }
    const pending = entry.pending.filter((name) => name !== sink);
    if (pending.length > 0) next.push({ ...entry, pending });
  }
  return next;
}
