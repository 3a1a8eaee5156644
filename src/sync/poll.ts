/**
 * One poll of one project: walk the operations log from the newest record down to the committed
 * watermark, follow the open operations that the walk did not reach, and return the next state
 * to commit with the transitions found. Nothing is written here: the caller commits the result
 * in one step, or discards it whole when any request fails (invariant 2).
 *
 * A walk reads at most `maxPagesPerPoll` pages. When the gap to the watermark is longer (a
 * catch-up after downtime), what was walked is committed as a segment with a resume cursor and
 * the next polls continue downward from there; the watermark moves only once the gap is closed
 * (invariant 4). Records newer than the segment wait until then.
 */
import type { Operation, OperationsPage } from "../contract/index.js";
import {
  STATE_FORMAT,
  STATE_VERSION,
  type OutboxEntry,
  type Position,
  type ProjectState,
  type Segment,
} from "../store/index.js";
import { BOTTOM, TopCollector, place } from "./position.js";
import { addTransitions, emptyTotals } from "./totals.js";
import {
  age,
  baseline,
  observe,
  watchExpired,
  type TrackedOperation,
  type TrackerOptions,
} from "./tracker.js";
import type { Transition } from "./transitions.js";

/** The two reads a poll needs; the API client provides them. */
export interface OperationsSource {
  listOperations(
    projectId: string,
    query: { limit: number; cursor?: string },
    options?: { signal?: AbortSignal },
  ): Promise<OperationsPage>;
  getOperation(
    projectId: string,
    operationId: string,
    options?: { signal?: AbortSignal },
  ): Promise<Operation>;
}

export interface PollOptions extends TrackerOptions {
  /** Page size of the first request of a walk from the top; small, since most polls stop there. */
  readonly firstPageLimit: number;
  /** Page size of every further request (the API allows up to 1000). */
  readonly pageLimit: number;
  /** Pages one poll may read before committing what it has as a catch-up segment. */
  readonly maxPagesPerPoll: number;
  /** First start: how far back to look for open operations to follow (nothing is counted). */
  readonly firstStartLookbackSeconds: number;
  /** First start: count operations created within this many seconds (0 = off). */
  readonly backfillSeconds: number;
  /** Turns a poll's transitions into alerts for the outbox (committed with the checkpoint). */
  readonly alertsFor?: (transitions: readonly Transition[], context: AlertContext) => OutboxEntry[];
}

export interface AlertContext {
  /** The first poll of a project with `backfill`: history is being counted, not happening now. */
  readonly backfill: boolean;
  /** When the poll found the transitions (epoch ms). */
  readonly nowMs: number;
}

export interface PollResult {
  /**
   * The state to commit. Its outbox is the one the poll started from: the committer adds
   * `alerts` to the latest outbox (which deliveries may have changed meanwhile).
   */
  readonly state: ProjectState;
  /** New alerts for the outbox, raised by this poll's transitions. */
  readonly alerts: readonly OutboxEntry[];
  readonly transitions: readonly Transition[];
  /** Requests made (pages and single reads). */
  readonly requests: number;
  /** A catch-up segment remains open after this poll. */
  readonly catchingUp: boolean;
  /** This poll walked from the newest record down to the checkpoint: nothing is left behind. */
  readonly caughtUp: boolean;
  /** This was the project's first poll (no committed state before it). */
  readonly firstStart: boolean;
}

/** A tracked operation as it travels through one poll, with the page cursor it was read at. */
type Followed = TrackedOperation & { readonly cursor?: string | undefined };

/** Handler for each record a walk reads; `placement` is relative to the walk's floor. */
type RecordVisitor = (record: Operation, pageCursor: string | undefined, fresh: boolean) => void;

export async function poll(
  source: OperationsSource,
  projectId: string,
  previous: ProjectState | undefined,
  nowMs: number,
  options: PollOptions,
  signal?: AbortSignal,
): Promise<PollResult> {
  const firstStart = previous === undefined;
  const tracked = new Map<string, Followed>(
    (previous?.tracked ?? []).map((t) => [t.id, fromStored(t)]),
  );
  const seen = new Set<string>();
  const transitions: Transition[] = [];
  let requests = 0;

  const list = async (limit: number, cursor: string | undefined): Promise<OperationsPage> => {
    requests += 1;
    const query = cursor === undefined ? { limit } : { limit, cursor };
    return source.listOperations(projectId, query, signal === undefined ? {} : { signal });
  };

  // What the walk counts, and against which floor.
  const baselineOnly = firstStart && options.backfillSeconds <= 0;
  const floor: Position = firstStart
    ? baselineOnly
      ? { second: Math.floor(nowMs / 1000) - options.firstStartLookbackSeconds, ids: [] }
      : { second: Math.floor(nowMs / 1000) - options.backfillSeconds - 1, ids: [] }
    : previous.watermark;
  const segment = previous?.segment ?? null;

  const visit: RecordVisitor = (record, pageCursor, fresh) => {
    const before = tracked.get(record.id);
    if (!fresh && before === undefined) return;
    seen.add(record.id);
    let next: TrackedOperation | undefined;
    if (fresh && baselineOnly) {
      next = baseline(record, options);
    } else {
      const observation = observe(before, record, nowMs, options);
      transitions.push(...observation.transitions);
      next = observation.next;
    }
    if (next === undefined) tracked.delete(record.id);
    else tracked.set(record.id, { ...next, cursor: pageCursor });
  };

  const top = new TopCollector();
  const walked = await walk(
    list,
    floor,
    segment?.resumeCursor,
    options,
    (record, pageCursor, fresh) => {
      // The newest records become the next checkpoint; on a first start, whatever they are.
      if (segment === null && (fresh || baselineOnly)) top.add(record);
      visit(record, pageCursor, fresh);
    },
  );

  // The checkpoint: what is now fully walked.
  let watermark: Position = previous?.watermark ?? BOTTOM;
  let nextSegment: Segment | null = segment;
  if (segment !== null) {
    if (walked.complete) {
      watermark = segment.top;
      nextSegment = null;
    } else {
      nextSegment = { top: segment.top, resumeCursor: walked.resumeCursor };
    }
  } else {
    const newest = top.position(firstStart ? BOTTOM : watermark) ?? watermark;
    if (walked.complete || baselineOnly) {
      watermark = newest;
    } else {
      nextSegment = { top: newest, resumeCursor: walked.resumeCursor };
      // A first start's catch-up (a backfill longer than one poll) stops at the window's start.
      if (firstStart) watermark = floor;
    }
  }

  // Operations followed but not read by the walk: re-read their page, or read them by id.
  requests += await follow(source, projectId, tracked, seen, visit, options, signal);

  for (const [id, t] of tracked) {
    // A failed operation watched long enough for a retry is let go, after this last read.
    if (watchExpired(t, nowMs)) {
      tracked.delete(id);
      continue;
    }
    if (seen.has(id)) continue;
    const aged = age(t, nowMs, options);
    transitions.push(...aged.transitions);
    if (aged.next !== undefined) tracked.set(id, { ...aged.next, cursor: t.cursor });
  }

  const totals = addTransitions(previous?.totals ?? emptyTotals(), transitions);
  const alerts =
    options.alertsFor?.(transitions, {
      backfill: firstStart && !baselineOnly,
      nowMs,
    }) ?? [];

  const state: ProjectState = {
    format: STATE_FORMAT,
    version: STATE_VERSION,
    projectId,
    sequence: (previous?.sequence ?? 0) + 1,
    committedAtMs: nowMs,
    watermark,
    segment: nextSegment,
    tracked: [...tracked.values()].map(toStored),
    totals,
    outbox: previous?.outbox ?? [],
    deadLetters: previous?.deadLetters ?? [],
  };
  return {
    state,
    alerts,
    transitions,
    requests,
    catchingUp: nextSegment !== null,
    caughtUp: segment === null && walked.complete,
    firstStart,
  };
}

interface WalkResult {
  /** The walk reached the floor or the end of the log. */
  readonly complete: boolean;
  /** Where to continue when not complete. */
  readonly resumeCursor: string;
}

/**
 * Reads pages newest first from `startCursor` (or the top) until a record lies below `floor`,
 * the log ends, or the page budget is spent. Every record is handed to `visit`, marked fresh
 * when it lies above the floor.
 */
async function walk(
  list: (limit: number, cursor: string | undefined) => Promise<OperationsPage>,
  floor: Position,
  startCursor: string | undefined,
  options: PollOptions,
  visit: RecordVisitor,
): Promise<WalkResult> {
  const floorIds = new Set(floor.ids);
  let cursor = startCursor;
  for (let pages = 0; ;) {
    const limit =
      pages === 0 && startCursor === undefined ? options.firstPageLimit : options.pageLimit;
    const page = await list(limit, cursor);
    pages += 1;
    let reached = false;
    for (const record of page.operations) {
      if (place(record, floor, floorIds) !== "above") reached = true;
      visit(record, cursor, !reached);
    }
    const next = page.pagination?.cursor;
    if (reached || page.operations.length < limit || next === undefined) {
      return { complete: true, resumeCursor: "" };
    }
    if (pages >= options.maxPagesPerPoll) return { complete: false, resumeCursor: next };
    cursor = next;
  }
}

/**
 * Reads the followed operations the walk did not reach. An operation last read on a later page
 * is re-read with that page's cursor, which returns it and its neighbours in one request;
 * one last read on the first page (no cursor) is read by id. Newest first, so one page read
 * can cover several followed operations. Returns the number of requests made.
 */
async function follow(
  source: OperationsSource,
  projectId: string,
  tracked: Map<string, Followed>,
  seen: Set<string>,
  visit: RecordVisitor,
  options: PollOptions,
  signal: AbortSignal | undefined,
): Promise<number> {
  const pending = [...tracked.values()]
    .filter((t) => !seen.has(t.id))
    .sort((a, b) => b.createdAtMs - a.createdAtMs);
  const requestOptions = signal === undefined ? {} : { signal };
  let requests = 0;
  for (const t of pending) {
    if (seen.has(t.id)) continue;
    requests += 1;
    if (t.cursor !== undefined) {
      const page = await source.listOperations(
        projectId,
        { limit: options.pageLimit, cursor: t.cursor },
        requestOptions,
      );
      for (const record of page.operations) visit(record, t.cursor, false);
      if (seen.has(t.id)) continue;
      // Not on its page any more (the service dropped it from the log): read it by id.
      requests += 1;
    }
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

function isNotFound(error: unknown): boolean {
  return (error as { status?: unknown } | null)?.status === 404;
}

function fromStored(t: ProjectState["tracked"][number]): Followed {
  return {
    ...t,
    branchId: t.branchId,
    endpointId: t.endpointId,
    error: t.error,
    watchUntilMs: t.watchUntilMs,
    cursor: t.cursor,
  };
}

function toStored(t: Followed): ProjectState["tracked"][number] {
  const stored: ProjectState["tracked"][number] = {
    id: t.id,
    projectId: t.projectId,
    action: t.action,
    status: t.status,
    failuresCount: t.failuresCount,
    createdAtMs: t.createdAtMs,
    updatedAtMs: t.updatedAtMs,
    durationMs: t.durationMs,
    stuck: t.stuck,
    failed: t.failed,
  };
  if (t.branchId !== undefined) stored.branchId = t.branchId;
  if (t.endpointId !== undefined) stored.endpointId = t.endpointId;
  if (t.error !== undefined) stored.error = t.error;
  if (t.watchUntilMs !== undefined) stored.watchUntilMs = t.watchUntilMs;
  if (t.stuckStatus !== undefined) stored.stuckStatus = t.stuckStatus;
  if (t.cursor !== undefined) stored.cursor = t.cursor;
  return stored;
}
