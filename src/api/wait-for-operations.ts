import type { Operation } from "../contract/index.js";
import type { Clock } from "../clock.js";
import {
  isStillWatched,
  observe,
  summarise,
  type StatusChange,
  type Watch,
  type WaitResult,
} from "./operation-watch.js";

export interface WaitOptions {
  /** Pause between polls. Default 5000 ms, the seed's suggested poll interval. */
  readonly intervalMs?: number;
  /** Give up after this long. Default 300000 ms (the official SDK's timeout). */
  readonly timeoutMs?: number;
  /**
   * How long a `failed` operation is still read, from when it was first seen failed, in case the
   * service retries it (as the daemon's `poll.watchFailed` does). Default 0: failed is an end.
   */
  readonly retryGraceMs?: number;
  /** Told of each operation's first record, then of every status change. */
  readonly onStatus?: (change: StatusChange) => void;
  /**
   * Stops the wait (Ctrl-C): it resolves at once with the records read so far, the operations
   * still open in `pending` and `interrupted` set.
   */
  readonly signal?: AbortSignal;
}

/** Reads the current record of each operation of `ids` (in any order); rejects if one cannot be. */
export type ReadOperations = (
  ids: readonly string[],
  signal: AbortSignal | undefined,
) => Promise<readonly Operation[]>;

const WAIT_DEFAULTS = { intervalMs: 5_000, timeoutMs: 300_000 } as const;

/**
 * Reads every operation still watched (see `isStillWatched`), each interval, until none is or
 * the timeout strikes; operations that have ended are not read again. Errors of `read` (after
 * the client's own retries) propagate.
 */
export async function followOperations(
  read: ReadOperations,
  clock: Clock,
  operations: readonly Operation[],
  options: WaitOptions = {},
): Promise<WaitResult> {
  const intervalMs = options.intervalMs ?? WAIT_DEFAULTS.intervalMs;
  const graceMs = options.retryGraceMs ?? 0;
  const deadline = clock.monotonic() + (options.timeoutMs ?? WAIT_DEFAULTS.timeoutMs);
  const watches = new Map<string, Watch>();
  const note = (record: Operation): void => {
    const { watch, change } = observe(watches.get(record.id), record, clock.monotonic());
    watches.set(record.id, watch);
    if (change !== undefined) options.onStatus?.(change);
  };
  const watched = (): string[] =>
    [...watches.values()]
      .filter((w) => isStillWatched(w, clock.monotonic(), graceMs))
      .map((w) => w.record.id);

  for (const op of operations) note(op);
  let ids = watched();
  while (ids.length > 0) {
    const remaining = deadline - clock.monotonic();
    if (remaining <= 0) break;
    try {
      await clock.sleep(Math.min(intervalMs, remaining), options.signal);
      for (const record of await read(ids, options.signal)) {
        if (watches.has(record.id)) note(record);
      }
    } catch (error) {
      if (options.signal?.aborted === true) return summarise(watches.values(), true);
      throw error;
    }
    ids = watched();
  }
  return summarise(watches.values());
}

/** `followOperations` with one `fetchOperation` per operation still watched. */
export function waitForOperations(
  fetchOperation: (operationId: string, signal: AbortSignal | undefined) => Promise<Operation>,
  clock: Clock,
  operations: readonly Operation[],
  options: WaitOptions = {},
): Promise<WaitResult> {
  return followOperations(
    (ids, signal) => Promise.all(ids.map((id) => fetchOperation(id, signal))),
    clock,
    operations,
    options,
  );
}
