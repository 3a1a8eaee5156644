/** A page of a cursor-paged list. */
export interface CursorPage {
  readonly pagination?: { readonly cursor: string } | undefined;
}

/**
 * Walks a cursor-paged list from `startCursor` (or the start), yielding each non-empty page.
 * It stops on an empty page or a page shorter than `limit`: the real API returns a cursor even
 * on the last page, so the cursor alone cannot say "no more" (and a full page without one is a
 * malformed answer, see `pageIsConsistent`). A cursor that was already followed means the pages
 * form a loop: the walk throws instead of going round it forever.
 */
export async function* walkPages<P extends CursorPage>(
  fetchPage: (cursor: string | undefined) => Promise<P>,
  itemCount: (page: P) => number,
  limit: number,
  startCursor?: string,
): AsyncGenerator<P, void, undefined> {
  const followed = new Set<string>();
  let cursor = startCursor;
  for (;;) {
    if (cursor !== undefined) followed.add(cursor);
    const page = await fetchPage(cursor);
    const count = itemCount(page);
    if (count === 0) return;
    yield page;
    cursor = page.pagination?.cursor;
    if (count < limit || cursor === undefined) return;
    if (followed.has(cursor)) throw new PagingLoopError(cursor);
  }
}

/** The list's cursors lead back to a page already read. */
export class PagingLoopError extends Error {
  override readonly name = "PagingLoopError";
  constructor(readonly cursor: string) {
    super(`pagination.cursor ${cursor} was already followed: the list's pages form a loop`);
  }
}

/**
 * The consistency rule of every full page: it carries a cursor (without one the end of the list
 * cannot be told from a page cut short), and that cursor differs from the one that fetched it
 * (else following it would fetch the same page forever).
 */
export function pageIsConsistent<P extends CursorPage>(
  sentCursor: string | undefined,
  limit: number,
  itemCount: (page: P) => number,
): (page: P) => string | undefined {
  return (page) => {
    if (itemCount(page) < limit) return undefined;
    const cursor = page.pagination?.cursor;
    if (cursor === undefined) return `a full page of ${limit} came without pagination.cursor`;
    if (sentCursor !== undefined && cursor === sentCursor) {
      return `pagination.cursor did not advance (still ${sentCursor})`;
    }
    return undefined;
  };
}

/** A page's request: the first one, or the one after `cursor`. */
export function withCursor(
  page: { limit: number },
  cursor: string | undefined,
): { limit: number; cursor?: string } {
  return cursor === undefined ? page : { ...page, cursor };
}

/** A limit outside the API's bounds is a programming error, not something to send. */
export function checkLimit(
  list: string,
  limit: number,
  bounds: { min: number; max: number },
): void {
  if (!Number.isInteger(limit) || limit < bounds.min || limit > bounds.max) {
    throw new RangeError(
      `${list} limit must be an integer in ${bounds.min}..${bounds.max}, got ${limit}`,
    );
  }
}
