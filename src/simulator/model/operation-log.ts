import { formatUuid, uuidFirstWord, type UuidWords } from "../ids.js";
import type { Interner } from "./interner.js";
import {
  DEFAULT_FAILURE_MESSAGE,
  failuresAfter,
  isFailureStatus,
  isRetry,
  showsError,
} from "./status-rules.js";

/** What a new record is made of; `atUs` becomes its creation time (bumped past ties). */
export interface NewOperationRecord {
  readonly id: UuidWords;
  /** Index of the branch in the project's branch table. */
  readonly branch: number;
  /** Index of the endpoint in the project's endpoint table, or -1 for none. */
  readonly endpoint: number;
  readonly action: string;
  readonly status: string;
  readonly atUs: number;
  readonly error?: string;
  /**
   * A misdated record: its shown `created_at` is the real creation time plus this (kept within
   * the years 0001..9999). Order, cursors and durations keep using the real time.
   */
  readonly createdOffsetUs?: number;
}

/** One arrival of an operation at a status: the ground truth that tests compare against. */
export interface HistoryEntry {
  readonly status: string;
  readonly atUs: number;
  readonly failuresCount: number;
}

const NO_ENDPOINT = -1;
const MAX_FAILURES = 0xffff;
/** The range a shown `created_at` is kept in: four-digit years, as ISO 8601 needs. */
const MIN_SHOWN_US = Date.parse("0001-01-01T00:00:00Z") * 1000;
const MAX_SHOWN_US = Date.parse("9999-12-31T23:59:59Z") * 1000;

type Column = Float64Array | Uint32Array | Int32Array | Uint16Array;

function widen<T extends Column>(column: T, capacity: number, make: (n: number) => T): T {
  const next = make(capacity);
  next.set(column);
  return next;
}

/**
 * The append-only operation log of one project, stored column-wise in typed arrays so that a
 * million records cost tens of megabytes rather than a million objects.
 *
 * Records are kept in creation order, and creation times are strictly increasing: a record
 * created in the same microsecond as the previous one is moved one microsecond later. A page
 * (newest first, strictly older than a cursor) is therefore a binary search plus a slice.
 */
export class OperationLog {
  private count = 0;
  private capacity: number;
  private createdUs: Float64Array;
  private updatedUs: Float64Array;
  private idWords: Uint32Array;
  private branches: Uint32Array;
  private endpoints: Int32Array;
  private actionCodes: Uint16Array;
  private statusCodes: Uint16Array;
  private failures: Uint16Array;
  // Retries and failures are rare: sparse maps keep the common record small.
  private readonly retryAtUs = new Map<number, number>();
  private readonly errors = new Map<number, string>();
  // Misdated records are rarer still: the offset of their shown creation time.
  private readonly createdOffsets = new Map<number, number>();

  // Status history, one row per arrival, in the order the arrivals happened.
  private historyCount = 0;
  private historyCapacity: number;
  private historyOp: Uint32Array;
  private historyAtUs: Float64Array;
  private historyStatus: Uint16Array;
  private historyFailures: Uint16Array;

  // Built on the first lookup by id; maps a UUID's first word to the record(s) starting with it.
  private idIndex: Map<number, number | number[]> | undefined;

  constructor(
    private readonly actions: Interner,
    private readonly statuses: Interner,
    initialCapacity = 8,
  ) {
    this.capacity = Math.max(1, initialCapacity);
    this.createdUs = new Float64Array(this.capacity);
    this.updatedUs = new Float64Array(this.capacity);
    this.idWords = new Uint32Array(this.capacity * 4);
    this.branches = new Uint32Array(this.capacity);
    this.endpoints = new Int32Array(this.capacity);
    this.actionCodes = new Uint16Array(this.capacity);
    this.statusCodes = new Uint16Array(this.capacity);
    this.failures = new Uint16Array(this.capacity);
    this.historyCapacity = this.capacity * 2;
    this.historyOp = new Uint32Array(this.historyCapacity);
    this.historyAtUs = new Float64Array(this.historyCapacity);
    this.historyStatus = new Uint16Array(this.historyCapacity);
    this.historyFailures = new Uint16Array(this.historyCapacity);
  }

  get size(): number {
    return this.count;
  }

  /** Creation time of the newest record, or undefined for an empty log. */
  get lastCreatedUs(): number | undefined {
    return this.count === 0 ? undefined : this.createdAt(this.count - 1);
  }

  /** Appends a record and returns its index. */
  append(record: NewOperationRecord): number {
    if (this.count === this.capacity) this.grow(this.capacity * 2);
    const i = this.count;
    const previous = this.lastCreatedUs;
    const created = previous === undefined ? record.atUs : Math.max(record.atUs, previous + 1);
    this.createdUs[i] = created;
    this.updatedUs[i] = created;
    this.idWords.set(record.id, i * 4);
    this.branches[i] = record.branch;
    this.endpoints[i] = record.endpoint;
    this.actionCodes[i] = this.actions.code(record.action);
    this.statusCodes[i] = this.statuses.code(record.status);
    this.failures[i] = failuresAfter(0, record.status);
    if (isFailureStatus(record.status)) {
      this.errors.set(i, record.error ?? DEFAULT_FAILURE_MESSAGE);
    }
    if (record.createdOffsetUs !== undefined && record.createdOffsetUs !== 0) {
      const shown = Math.min(
        MAX_SHOWN_US,
        Math.max(MIN_SHOWN_US, created + record.createdOffsetUs),
      );
      this.createdOffsets.set(i, shown - created);
    }
    this.count++;
    this.indexId(i);
    this.recordHistory(i, created);
    return i;
  }

  /** Moves record `i` to `status` at `atUs`, applying the counter rules of status-rules. */
  transition(i: number, status: string, atUs: number, error?: string): void {
    this.check(i);
    const previous = this.status(i);
    const at = Math.max(atUs, this.updatedAt(i));
    this.failures[i] = Math.min(MAX_FAILURES, failuresAfter(this.failuresCount(i), status));
    if (isRetry(previous, status)) this.retryAtUs.set(i, at);
    if (isFailureStatus(status)) this.errors.set(i, error ?? DEFAULT_FAILURE_MESSAGE);
    this.statusCodes[i] = this.statuses.code(status);
    this.updatedUs[i] = at;
    this.recordHistory(i, at);
  }

  id(i: number): string {
    this.check(i);
    const w = this.idWords;
    return formatUuid(w[i * 4] ?? 0, w[i * 4 + 1] ?? 0, w[i * 4 + 2] ?? 0, w[i * 4 + 3] ?? 0);
  }

  branch(i: number): number {
    return this.branches[i] ?? 0;
  }

  /** The endpoint table index, or undefined for an operation that concerns no endpoint. */
  endpoint(i: number): number | undefined {
    const e = this.endpoints[i] ?? NO_ENDPOINT;
    return e === NO_ENDPOINT ? undefined : e;
  }

  action(i: number): string {
    return this.actions.value(this.actionCodes[i] ?? 0);
  }

  status(i: number): string {
    return this.statuses.value(this.statusCodes[i] ?? 0);
  }

  failuresCount(i: number): number {
    return this.failures[i] ?? 0;
  }

  createdAt(i: number): number {
    return this.createdUs[i] ?? 0;
  }

  /**
   * The creation time the API shows: the real one, or for a misdated record the real one plus
   * its offset. Only views use it; order and cursors use `createdAt`.
   */
  shownCreatedAt(i: number): number {
    return this.createdAt(i) + (this.createdOffsets.get(i) ?? 0);
  }

  updatedAt(i: number): number {
    return this.updatedUs[i] ?? 0;
  }

  retryAt(i: number): number | undefined {
    return this.retryAtUs.get(i);
  }

  /** The failure message, shown only while the record is failed or in error. */
  error(i: number): string | undefined {
    return showsError(this.status(i)) ? this.errors.get(i) : undefined;
  }

  /**
   * Indices of up to `limit` records created strictly before `beforeUs` (or of the newest
   * records when it is undefined), newest first. O(log n + limit).
   */
  newestFirst(beforeUs: number | undefined, limit: number): number[] {
    const end = beforeUs === undefined ? this.count : this.firstAtOrAfter(beforeUs);
    const start = Math.max(0, end - limit);
    const page: number[] = [];
    for (let i = end - 1; i >= start; i--) page.push(i);
    return page;
  }

  /**
   * Like `newestFirst`, but starting one record earlier: the page begins with the oldest record
   * created at or after `beforeUs` (the record the cursor was taken from, on a cursor this log
   * answered), then goes on as the normal page, `limit` records at most. With nothing at or
   * after `beforeUs` it is the normal page.
   */
  newestFirstOverlapping(beforeUs: number, limit: number): number[] {
    const end = Math.min(this.count, this.firstAtOrAfter(beforeUs) + 1);
    const start = Math.max(0, end - limit);
    const page: number[] = [];
    for (let i = end - 1; i >= start; i--) page.push(i);
    return page;
  }

  /** The index of the record with this id, or undefined. */
  indexOf(id: string): number | undefined {
    const key = uuidFirstWord(id);
    if (key === undefined) return undefined;
    if (this.idIndex === undefined) {
      this.idIndex = new Map();
      for (let i = 0; i < this.count; i++) this.indexId(i);
    }
    const hit = this.idIndex.get(key);
    const candidates = hit === undefined ? [] : typeof hit === "number" ? [hit] : hit;
    return candidates.find((i) => this.id(i) === id);
  }

  /** Every record's status history, indexed like the records. */
  histories(): HistoryEntry[][] {
    const result: HistoryEntry[][] = Array.from({ length: this.count }, () => []);
    for (let h = 0; h < this.historyCount; h++) {
      result[this.historyOp[h] ?? 0]?.push({
        status: this.statuses.value(this.historyStatus[h] ?? 0),
        atUs: this.historyAtUs[h] ?? 0,
        failuresCount: this.historyFailures[h] ?? 0,
      });
    }
    return result;
  }

  /** Reserves room for `extra` more records (bulk seeding avoids repeated doubling). */
  reserve(extra: number, historyPerRecord = 2): void {
    if (this.count + extra > this.capacity) this.grow(this.count + extra);
    const historyNeeded = this.historyCount + extra * historyPerRecord;
    if (historyNeeded > this.historyCapacity) this.growHistory(historyNeeded);
  }

  private firstAtOrAfter(us: number): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.createdAt(mid) < us) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private indexId(i: number): void {
    if (this.idIndex === undefined) return;
    const key = this.idWords[i * 4] ?? 0;
    const hit = this.idIndex.get(key);
    if (hit === undefined) this.idIndex.set(key, i);
    else if (typeof hit === "number") this.idIndex.set(key, [hit, i]);
    else hit.push(i);
  }

  private recordHistory(i: number, atUs: number): void {
    if (this.historyCount === this.historyCapacity) this.growHistory(this.historyCapacity * 2);
    const h = this.historyCount++;
    this.historyOp[h] = i;
    this.historyAtUs[h] = atUs;
    this.historyStatus[h] = this.statusCodes[i] ?? 0;
    this.historyFailures[h] = this.failures[i] ?? 0;
  }

  private check(i: number): void {
    if (!Number.isInteger(i) || i < 0 || i >= this.count) {
      throw new RangeError(`no operation at index ${i}`);
    }
  }

  private grow(capacity: number): void {
    this.capacity = capacity;
    this.createdUs = widen(this.createdUs, capacity, (n) => new Float64Array(n));
    this.updatedUs = widen(this.updatedUs, capacity, (n) => new Float64Array(n));
    this.idWords = widen(this.idWords, capacity * 4, (n) => new Uint32Array(n));
    this.branches = widen(this.branches, capacity, (n) => new Uint32Array(n));
    this.endpoints = widen(this.endpoints, capacity, (n) => new Int32Array(n));
    this.actionCodes = widen(this.actionCodes, capacity, (n) => new Uint16Array(n));
    this.statusCodes = widen(this.statusCodes, capacity, (n) => new Uint16Array(n));
    this.failures = widen(this.failures, capacity, (n) => new Uint16Array(n));
  }

  private growHistory(capacity: number): void {
    this.historyCapacity = capacity;
    this.historyOp = widen(this.historyOp, capacity, (n) => new Uint32Array(n));
    this.historyAtUs = widen(this.historyAtUs, capacity, (n) => new Float64Array(n));
    this.historyStatus = widen(this.historyStatus, capacity, (n) => new Uint16Array(n));
    this.historyFailures = widen(this.historyFailures, capacity, (n) => new Uint16Array(n));
  }
}
