/**
 * Runs `work` for every item with at most `limit` calls in flight at once, and resolves when
 * all have settled. `work` reports its own failures; one that throws does not stop the others,
 * and the first such error is rethrown at the end.
 */
export async function forEachBounded<T>(
  items: Iterable<T>,
  limit: number,
  work: (item: T) => Promise<unknown>,
): Promise<void> {
  const iterator = items[Symbol.iterator]();
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    for (let next = iterator.next(); next.done !== true; next = iterator.next()) {
      try {
        await work(next.value);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.floor(limit)) }, worker));
  if (failure !== undefined) throw failure.error;
}
