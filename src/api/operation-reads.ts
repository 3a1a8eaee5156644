/**
 * Reading the operations a waiter follows with the fewest requests: one get when one is left; a
 * page or two of the project's log (newest first) when several are, then a get for each not
 * found there. And finding the operations open at the start, from the log's newest pages.
 */
import type { Operation, OperationsPage } from "../contract/index.js";
import { operationOutcome } from "./operation-watch.js";
import { walkPages } from "./paging.js";
import type { ReadOperations } from "./wait-for-operations.js";

/** The two reads a waiter makes (the client's methods of the same names). */
export interface OperationSource {
  listOperations(
    projectId: string,
    page: { readonly limit: number; readonly cursor?: string },
    options?: { readonly signal?: AbortSignal },
  ): Promise<OperationsPage>;
  getOperation(
    projectId: string,
    operationId: string,
    options?: { readonly signal?: AbortSignal },
  ): Promise<Operation>;
}

/** Records per page of the log a waiter reads. */
export const WAIT_PAGE_LIMIT = 100;
/** Pages of the log one read of several operations goes through before it gets the rest. */
export const WAIT_MAX_PAGES = 2;
/** How far back from the newest record `findOpenOperations` looks for open operations. */
export const OPEN_LOOKBACK_MS = 24 * 3600 * 1000;

/**
 * Whether a walk of the log for `missing` operations should read the next page, after a page
 * whose oldest record was created at `oldestOnPageMs`: not when nothing is missing, when the
 * page cap is reached, or when every missing operation (all of whose creation times are known)
 * was created after that record, so that it cannot lie further back.
 */
export function readNextPage(
  missing: readonly string[],
  createdAtMs: ReadonlyMap<string, number>,
  oldestOnPageMs: number | undefined,
  pagesRead: number,
): boolean {
  if (missing.length === 0 || pagesRead >= WAIT_MAX_PAGES) return false;
  if (oldestOnPageMs === undefined) return true;
  const created = missing.map((id) => createdAtMs.get(id));
  if (created.some((ms) => ms === undefined)) return true;
  return created.some((ms) => (ms ?? 0) <= oldestOnPageMs);
}

/**
 * A `ReadOperations` over `source` for one project. It remembers each operation's creation time
 * from the records it has read, to stop a walk of the log as soon as what it looks for cannot
 * be further back.
 */
export function operationReader(source: OperationSource, projectId: string): ReadOperations {
  const createdAtMs = new Map<string, number>();
  const get = async (id: string, signal: AbortSignal | undefined): Promise<Operation> =>
    source.getOperation(projectId, id, withSignal(signal));
  return async (ids, signal) => {
    const found = new Map<string, Operation>();
    if (ids.length > 1) {
      const wanted = new Set(ids);
      let pagesRead = 0;
      for await (const page of logPages(source, projectId, signal)) {
        pagesRead += 1;
        for (const op of page.operations) if (wanted.has(op.id)) found.set(op.id, op);
        const missing = ids.filter((id) => !found.has(id));
        const oldest = page.operations.at(-1);
        const oldestMs = oldest === undefined ? undefined : Date.parse(oldest.created_at);
        if (!readNextPage(missing, createdAtMs, oldestMs, pagesRead)) break;
      }
    }
    const rest = ids.filter((id) => !found.has(id));
    for (const op of await Promise.all(rest.map((id) => get(id, signal)))) found.set(op.id, op);
    const records = ids.flatMap((id) => found.get(id) ?? []);
    for (const op of records) createdAtMs.set(op.id, Date.parse(op.created_at));
    return records;
  };
}

/** Which open operations `findOpenOperations` keeps: those on a branch, or an endpoint. */
export interface OpenFilter {
  readonly branchId?: string | undefined;
  readonly endpointId?: string | undefined;
}

/** An operation that has not ended (an undocumented status neither) and matches `filter`. */
export function isOpenMatch(op: Operation, filter: OpenFilter): boolean {
  return (
    operationOutcome(op.status) === "pending" &&
    (filter.branchId === undefined || op.branch_id === filter.branchId) &&
    (filter.endpointId === undefined || op.endpoint_id === filter.endpointId)
  );
}

/**
 * The project's operations open now that match `filter`, newest first: the log is read from its
 * newest record back to `OPEN_LOOKBACK_MS` before it (an operation open longer is long stuck).
 */
export async function findOpenOperations(
  source: OperationSource,
  projectId: string,
  filter: OpenFilter,
  signal?: AbortSignal,
): Promise<Operation[]> {
  const open: Operation[] = [];
  let sinceMs: number | undefined;
  for await (const page of logPages(source, projectId, signal)) {
    for (const op of page.operations) {
      const createdMs = Date.parse(op.created_at);
      sinceMs ??= createdMs - OPEN_LOOKBACK_MS;
      if (createdMs < sinceMs) return open;
      if (isOpenMatch(op, filter)) open.push(op);
    }
  }
  return open;
}

/** The project's log, newest first, `WAIT_PAGE_LIMIT` records a page. */
function logPages(
  source: OperationSource,
  projectId: string,
  signal: AbortSignal | undefined,
): AsyncGenerator<OperationsPage, void, undefined> {
  return walkPages(
    (cursor) =>
      source.listOperations(
        projectId,
        cursor === undefined ? { limit: WAIT_PAGE_LIMIT } : { limit: WAIT_PAGE_LIMIT, cursor },
        withSignal(signal),
      ),
    (page) => page.operations.length,
    WAIT_PAGE_LIMIT,
  );
}

function withSignal(signal: AbortSignal | undefined): { readonly signal?: AbortSignal } {
  return signal === undefined ? {} : { signal };
}
