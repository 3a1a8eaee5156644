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
  const walk = new WalkRecords(params);
  let cursor = params.startCursor;
  for (let pages = 1; ; pages += 1) {
    const first = pages === 1 && params.startCursor === undefined;
    const limit = first ? params.firstPageLimit : params.pageLimit;
    const page = await walk.read(limit, cursor);
    const next = cursorBelow(page, limit);
    if (walk.ended || next === undefined) return walk.complete(next);
    walk.check(cursor, next);
    if (pages >= params.maxPages && !walk.runOpen) return walk.incomplete(next);
    cursor = next;
  }
}

/**
 * The cursor below a page when it is full (more records follow); undefined at the log's end. A
 * full page without one fails the walk: the log's end cannot be told.
 */
function cursorBelow(page: OperationsPage, limit: number): string | undefined {
  if (page.operations.length < limit) return undefined;
  const next = page.pagination?.cursor;
  if (next === undefined) {
    throw new WalkError(
      "page_without_cursor",
      `a full page of ${limit} operations came without pagination.cursor: the log's end cannot be told`,
    );
  }
  return next;
}

/** What a walk has read so far, and where each record it reads stands (see `walkLog`). */
class WalkRecords {
  readonly #floorIds: ReadonlySet<string>;
  readonly #read: Set<string>;
  readonly #followed = new Set<string>();
  readonly #knownAhead = new Set<string>();
  /** The ids of the last page read, for `tail`. */
  #lastPage: readonly string[] = [];
  /** A run of older records whose fate the records after it decide. */
  #older: { record: Operation; cursor: string | undefined }[] = [];
  /** The walk reached what was walked before: the records after are read, never fresh. */
  ended = false;

  constructor(private readonly params: WalkParams) {
    this.#floorIds = new Set(params.floor.ids);
    this.#read = new Set(params.readBefore);
  }

  /** A run of older records is open: its fate waits for the next page. */
  get runOpen(): boolean {
    return this.#older.length > 0;
  }

  /** Reads the page at `cursor` and hands each of its records on. */
  async read(limit: number, cursor: string | undefined): Promise<OperationsPage> {
    if (cursor !== undefined) this.#followed.add(cursor);
    const page = await this.params.list(limit, cursor);
    this.#lastPage = page.operations.map((o) => o.id);
    for (const record of page.operations) this.#take(record, cursor);
    return page;
  }

  /** The next cursor must be new to this walk and below the one that fetched the page. */
  check(sent: string | undefined, next: string): void {
    checkCursor(this.#followed, sent, next);
  }

  /** The walk ends at the floor or the log's end: an older run with nothing new after is old. */
  complete(frontier: string | undefined): WalkResult {
    this.#settle(false);
    return { complete: true, resumeCursor: "", frontier, knownAhead: this.#knownAhead, tail: [] };
  }

  /** The walk stops at its page limit, to resume at `resumeCursor`. */
  incomplete(resumeCursor: string): WalkResult {
    return {
      complete: false,
      resumeCursor,
      frontier: undefined,
      knownAhead: this.#knownAhead,
      tail: this.#lastPage.slice(-TAIL_IDS),
    };
  }

  #take(record: Operation, cursor: string | undefined): void {
    const { visit } = this.params;
    if (this.#read.has(record.id)) {
      this.params.anomaly("duplicate_record", record);
      return;
    }
    this.#read.add(record.id);
    if (this.ended || this.params.known.has(record.id)) {
      // A known record (misdated, counted already) is still ahead of the floor.
      if (!this.ended) this.#knownAhead.add(record.id);
      visit(record, cursor, false);
      return;
    }
    const placement = place(record, this.params.floor, this.#floorIds);
    if (placement === "below") {
      this.#older.push({ record, cursor });
      if (this.#older.length >= OLDER_RUN_LIMIT) {
        // Nothing new after this many: the log has reached what was walked before.
        this.#settle(false);
        this.ended = true;
      }
      return;
    }
    // A new record, or the floor: either way the older run before it stands above the floor.
    this.#settle(true);
    visit(record, cursor, placement === "above");
    if (placement !== "above") this.ended = true;
  }

  #settle(fresh: boolean): void {
    for (const o of this.#older) {
      if (fresh) this.params.anomaly("out_of_order_record", o.record);
      this.params.visit(o.record, o.cursor, fresh);
    }
    this.#older = [];
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
