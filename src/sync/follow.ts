/**
 * A poll's follow-ups: the followed operations its walk did not reach, read again page by page
 * from where each was last read, or by id.
 */
import { cursorMicros } from "./cursor.js";
import type { Followed, RecordVisitor } from "./followed.js";
import type { OperationsSource } from "./poll-types.js";

export interface FollowInputs {
  readonly source: OperationsSource;
  readonly projectId: string;
  /** The operations followed; one the service no longer knows is taken out. */
  readonly tracked: Map<string, Followed>;
  /** The ids read by this poll so far (the walk's, and the follow-ups' as they are read). */
  readonly seen: ReadonlySet<string>;
  /** Hears each record read, with the cursor of its page. */
  readonly visit: RecordVisitor;
  readonly pageLimit: number;
  /** Just below what this poll has read, when a complete walk from the top gives it. */
  readonly frontier: string | undefined;
  readonly signal: AbortSignal | undefined;
}

/**
 * Reads the followed operations the walk did not reach, newest first, each with one page read
 * that returns it and its neighbours: from the cursor of the page it was last read on, or from
 * `frontier` (just below what this poll has read) when that lies deeper, or when it was last
 * read on a first page (no cursor of its own). Every read thus starts at or below the previous
 * one, so the reads cost no more than the pages down to the deepest operation, and each one
 * returns the operation it was made for, so they cost no more than one per operation. An
 * operation the pages no longer return is read by id. Returns the number of requests made.
 */
export async function follow(inputs: FollowInputs): Promise<number> {
  const { source, projectId, tracked, seen, visit, pageLimit, frontier, signal } = inputs;
  const pending = [...tracked.values()]
    .filter((t) => !seen.has(t.id))
    .sort((a, b) => b.createdAtMs - a.createdAtMs);
  const requestOptions = signal === undefined ? {} : { signal };
  let requests = 0;
  let below = frontier;
  for (const t of pending) {
    if (seen.has(t.id)) continue;
    const from = deeperCursor(t.cursor, below);
    if (from !== undefined) {
      requests += 1;
      const page = await source.listOperations(
        projectId,
        { limit: pageLimit, cursor: from },
        requestOptions,
      );
      for (const record of page.operations) visit(record, from, false);
      below = page.operations.length >= pageLimit ? page.pagination?.cursor : undefined;
      if (seen.has(t.id)) continue;
    }
    // Not on the page read for it (the service dropped it from the log): read it by id.
    requests += 1;
    try {
      visit(await source.getOperation(projectId, t.id, requestOptions), t.cursor, false);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      // The service no longer knows the operation: stop following it.
      tracked.delete(t.id);
    }
  }
  return requests;
}

/**
 * Of an operation's own cursor and the frontier, the one further down the log. Cursors are
 * microsecond timestamps (older is further down); one that is not keeps the operation's own.
 */
function deeperCursor(own: string | undefined, frontier: string | undefined): string | undefined {
  if (own === undefined || frontier === undefined) return own ?? frontier;
  const a = cursorMicros(own);
  const b = cursorMicros(frontier);
  if (a === undefined || b === undefined) return own;
  return a <= b ? own : frontier;
}

function isNotFound(error: unknown): boolean {
  return (error as { status?: unknown } | null)?.status === 404;
}
