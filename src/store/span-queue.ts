/**
 * The span queue's bookkeeping, as pure functions over a project's committed queue: adding new
 * spans (bounded), removing those the collector took, and moving those the export gave up on to
 * the span dead letters. Whoever commits the project's state applies them, so the queue always
 * changes in the same atomic write as the rest of the state.
 */
import { addBounded } from "./bounded-list.js";
import { spanKey, type QueuedSpan, type SpanDeadLetter } from "./span-record.js";

/** Most spans one project's queue holds; beyond it, new spans are dropped and counted. */
export const SPAN_QUEUE_LIMIT = 10_000;
/** Most span dead letters one project keeps (the newest). */
export const SPAN_DEAD_LETTER_LIMIT = 200;

/**
 * Adds spans not queued yet (by `spanKey`). When the queue is full the newest are dropped: the
 * spans already waiting keep their place, and the drop is reported.
 */
export function addToSpanQueue(
  queue: readonly QueuedSpan[],
  added: readonly QueuedSpan[],
  limit: number = SPAN_QUEUE_LIMIT,
): { queue: QueuedSpan[]; dropped: QueuedSpan[] } {
  const { list, dropped } = addBounded(queue, added, (q) => spanKey(q.span), limit);
  return { queue: list, dropped };
}

/** The queue without the spans of `keys` (the collector took them). */
export function removeFromSpanQueue(
  queue: readonly QueuedSpan[],
  keys: ReadonlySet<string>,
): QueuedSpan[] {
  return queue.filter((q) => !keys.has(spanKey(q.span)));
}

/** Moves the spans of `keys` to the dead letters (newest kept, bounded). */
export function deadLetterSpans(
  queue: readonly QueuedSpan[],
  deadLetters: readonly SpanDeadLetter[],
  keys: ReadonlySet<string>,
  reason: string,
  nowMs: number,
): { queue: QueuedSpan[]; deadLetters: SpanDeadLetter[] } {
  const added = queue
    .filter((q) => keys.has(spanKey(q.span)))
    .map((q) => ({ span: q.span, reason, atMs: nowMs }));
  return {
    queue: removeFromSpanQueue(queue, keys),
    deadLetters: [...deadLetters, ...added].slice(-SPAN_DEAD_LETTER_LIMIT),
  };
}
