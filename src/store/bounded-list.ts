/**
 * The rule the durable queues of the state share (the alert outbox, the span queue): entries are
 * added once, by key, and a full queue drops the newest, so that what waits already keeps its
 * place and the drop can be reported.
 */

/** `list` with the entries of `added` whose keys it lacks, up to `limit`; the rest dropped. */
export function addBounded<T>(
  list: readonly T[],
  added: readonly T[],
  keyOf: (entry: T) => string,
  limit: number,
): { list: T[]; dropped: T[] } {
  const keys = new Set(list.map(keyOf));
  const next = [...list];
  const dropped: T[] = [];
  for (const entry of added) {
    const key = keyOf(entry);
    if (keys.has(key)) continue;
    keys.add(key);
    if (next.length >= limit) dropped.push(entry);
    else next.push(entry);
  }
  return { list: next, dropped };
}
