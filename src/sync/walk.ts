/**
 * The cursor walk: reads a project's operations log newest first, from the top (or a catch-up's
 * resume cursor) down to the committed floor, and checks its own answers as it goes (invariants 8
 * and 9, docs/design.md): every operation id is handed on at most once, no cursor is followed
 * twice, each cursor lies below the one before it, and a full page always carries one. An answer
 * that breaks a rule fails the walk with a `WalkError` (nothing of it is committed); a record out
 * of order does not end the walk, so that it cannot hide the records after it.
 */
import type { Operation, OperationsPage } from "../contract/index.js";
import type { Position } from "../store/index.js";
import { cursorMicros } from "./cursor.js";
import { place } from "./position.js";

/**
 * Records dated below the floor in a row, with nothing new among them, after which the walk
 * takes them as old and ends: longer runs of records dated wrong are not told apart.
 */
export const OLDER_RUN_LIMIT = 20;

/** How an answer broke the walk's rules. */
export type WalkErrorKind = "cursor_revisited" | "cursor_not_descending" | "page_without_cursor";

/** The log's answers contradict each other: the poll fails, nothing of it is committed. */
export class WalkError extends Error {
  override readonly name = "WalkError";
  constructor(
    readonly kind: WalkErrorKind,
    message: string,
  ) {
    super(message);
  }
}

/** Oddities of single records that the walk works around; each is reported, none fails it. */
export type WalkAnomalyKind = "duplicate_record" | "out_of_order_record";

export interface WalkParams {
  readonly list: (limit: number, cursor: string | undefined) => Promise<OperationsPage>;
  /** Everything at or below this position was walked by an earlier poll. */
  readonly floor: Position;
  /** Records counted already that the floor does not cover (misdated ones): never fresh again. */
  readonly known: ReadonlySet<string>;
  /** Where a catch-up resumes; undefined: the top of the log. */
  readonly startCursor: string | undefined;
  /** Ids read just before `startCursor` by the walk that stopped there (see `WalkResult.tail`). */
  readonly readBefore?: readonly string[];
  readonly firstPageLimit: number;
  readonly pageLimit: number;
  /** Pages read before the walk stops incomplete (one more while a run's fate is open). */
  readonly maxPages: number;
  /**
   * Each record read, once, with the cursor of its page; `fresh` when it is new: above the
   * floor, or out of order before the walk's end (it stands among new records).
   */
  readonly visit: (record: Operation, pageCursor: string | undefined, fresh: boolean) => void;
  readonly anomaly: (kind: WalkAnomalyKind, record: Operation) => void;
}

export interface WalkResult {
  /** The walk reached the floor or the end of the log. */
  readonly complete: boolean;
  /** Where to continue when not complete. */
  readonly resumeCursor: string;
  /** The cursor below the last page read, when that page was full (more records follow). */
  readonly frontier: string | undefined;
  /** The `known` records the walk met before its end: they are still ahead of the floor. */
  readonly knownAhead: ReadonlySet<string>;
  /**
   * When not complete: the ids of the last records read (at most `TAIL_IDS`), so that the walk
   * that resumes can tell a page overlapping this one from new records.
   */
  readonly tail: readonly string[];
}

/** Ids a walk that stops incomplete hands to the one that resumes (see `WalkResult.tail`). */
export const TAIL_IDS = 100;

/**
 * Where the walk ends. Each record is one of:
 * - at the floor (one of the floor's own records, by id): walked before, and so is everything
 *   after it in the log. The walk ends there.
 * - known (a misdated record counted already): passed over; it neither counts nor ends the walk.
 * - new (dated above the floor): fresh.
 * - older (dated below the floor): either walked before, or new but dated wrong, out of the
 *   log's order. A run of such records followed by a new record or by the floor's own records
 *   stands above what was walked: it is out of order, and fresh. A run that reaches
 *   `OLDER_RUN_LIMIT` records, or the end of the log, with neither is old: the walk ends where
 *   it began (so a log whose floor records are gone still ends, a few records later).
 */
export async function walkLog(params: WalkParams): Promise<WalkResult> {
  const { floor, known, visit } = params;
  const floorIds = new Set(floor.ids);
  const read = new Set<string>(params.readBefore);
  const followed = new Set<string>();
  /** The ids of the last page read, for `tail`. */
  let lastPage: readonly string[] = [];
  const knownAhead = new Set<string>();
  let cursor = params.startCursor;
  /** A run of older records whose fate the records after it decide. */
  let older: { record: Operation; cursor: string | undefined }[] = [];
  let ended = false;
  const settle = (fresh: boolean): void => {
    for (const o of older) {
      if (fresh) params.anomaly("out_of_order_record", o.record);
      visit(o.record, o.cursor, fresh);
    }
    older = [];
  };
  for (let pages = 0; ;) {
    const limit =
      pages === 0 && params.startCursor === undefined ? params.firstPageLimit : params.pageLimit;
    if (cursor !== undefined) followed.add(cursor);
    const page = await params.list(limit, cursor);
    pages += 1;
    lastPage = page.operations.map((o) => o.id);
    for (const record of page.operations) {
      if (read.has(record.id)) {
        params.anomaly("duplicate_record", record);
        continue;
      }
      read.add(record.id);
      if (ended) {
        visit(record, cursor, false);
        continue;
      }
      if (known.has(record.id)) {
        knownAhead.add(record.id);
        visit(record, cursor, false);
        continue;
      }
      const placement = place(record, floor, floorIds);
      if (placement === "below") {
        older.push({ record, cursor });
        if (older.length >= OLDER_RUN_LIMIT) {
          // Nothing new after this many: the log has reached what was walked before.
          settle(false);
          ended = true;
        }
        continue;
      }
      // A new record, or the floor: either way the older run before it stands above the floor.
      settle(true);
      if (placement === "above") {
        visit(record, cursor, true);
      } else {
        visit(record, cursor, false);
        ended = true;
      }
    }
    const next = page.pagination?.cursor;
    const full = page.operations.length >= limit;
    if (full && next === undefined) {
      throw new WalkError(
        "page_without_cursor",
        `a full page of ${limit} operations came without pagination.cursor: the log's end cannot be told`,
      );
    }
    if (ended || !full) {
      // At the end of the log, a run with nothing new after it is old.
      settle(false);
      return {
        complete: true,
        resumeCursor: "",
        frontier: full ? next : undefined,
        knownAhead,
        tail: [],
      };
    }
    const following = next as string;
    checkCursor(followed, cursor, following);
    if (pages >= params.maxPages && older.length === 0) {
      return {
        complete: false,
        resumeCursor: following,
        frontier: undefined,
        knownAhead,
        tail: lastPage.slice(-TAIL_IDS),
      };
    }
    cursor = following;
  }
}

/** A cursor must be new to this walk and, where both read as timestamps, below the last one. */
function checkCursor(followed: ReadonlySet<string>, sent: string | undefined, next: string): void {
  if (followed.has(next)) {
    throw new WalkError(
      "cursor_revisited",
      `pagination.cursor ${next} was already followed in this walk: the pages form a loop`,
    );
  }
  if (sent === undefined) return;
  const before = cursorMicros(sent);
  const after = cursorMicros(next);
  if (before !== undefined && after !== undefined && after >= before) {
    throw new WalkError(
      "cursor_not_descending",
      `pagination.cursor ${next} does not lie below the cursor ${sent} that fetched its page`,
    );
  }
}
