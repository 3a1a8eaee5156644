/** A page of a cursor-paged list. */
export interface CursorPage {
  readonly pagination?: { readonly cursor: string } | undefined;
}

/**
 * Walks a cursor-paged list from `startCursor` (or the start), yielding each non-empty page.
 * It stops on an empty page, a page shorter than `limit` or a page without a cursor: the real
 * API returns a cursor even on the last page, so the cursor alone cannot say "no more".
 */
export async function* walkPages<P extends CursorPage>(
  fetchPage: (cursor: string | undefined) => Promise<P>,
  itemCount: (page: P) => number,
  limit: number,
  startCursor?: string,
): AsyncGenerator<P, void, undefined> {
  let cursor = startCursor;
  for (;;) {
    const page = await fetchPage(cursor);
    const count = itemCount(page);
    if (count === 0) return;
    yield page;
    cursor = page.pagination?.cursor;
    if (count < limit || cursor === undefined) return;
  }
}

/**
 * The consistency rule of every full page: its cursor must differ from the one that fetched
 * it, else following it would fetch the same page forever.
 */
export function cursorAdvances<P extends CursorPage>(
  sentCursor: string | undefined,
  limit: number,
  itemCount: (page: P) => number,
): (page: P) => string | undefined {
  return (page) =>
    itemCount(page) >= limit && sentCursor !== undefined && page.pagination?.cursor === sentCursor
      ? `pagination.cursor did not advance (still ${sentCursor})`
      : undefined;
}
