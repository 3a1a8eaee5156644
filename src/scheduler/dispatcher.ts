/**
 * Dispatch: starts the jobs due, the longest overdue first, never two of one project at once
 * and at most `maxConcurrent` in flight. The projects not in a job wait in a queue by due time
 * (`due-queue.ts`); a tick once a second, a timer to the next due time between ticks, and the
 * end of each job look for what is due. A project whose last job timed out is slow: slow
 * projects together run at most `slowShare(maxConcurrent)` jobs at once, so that however many
 * there are, the other projects keep most of the slots. While the account's key is refused, one
 * probe at a time runs, when the refusals allow it (`refusal-gate.ts`).
 */
import { setMaxListeners } from "node:events";
import { DueQueue, type Due } from "./due-queue.js";
import type { Entry } from "./entry.js";
import type { RefusalGate } from "./refusal-gate.js";

/** The tick: how often due jobs are looked for (a job that ends starts the next at once). */
export const TICK_MS = 1000;

/** Jobs of slow projects allowed in flight at once: a quarter of the slots, at least one. */
export function slowShare(maxConcurrent: number): number {
  return Math.max(1, Math.floor(maxConcurrent / 4));
}

/** What dispatch works with: the projects, their due times, the refusals and the job. */
export interface DispatchParts {
  readonly maxConcurrent: number;
  readonly monotonic: () => number;
  /** The projects: an entry no longer among them is not dispatched. */
  readonly entries: ReadonlyMap<string, Entry>;
  /** When the entry's next job is due. */
  readonly dueAt: (entry: Entry, now: number) => number;
  readonly refusals: RefusalGate;
  /** Runs the entry's job; it calls `done` as it ends, before its promise settles. */
  readonly run: (
    entry: Entry,
    now: number,
    probe: boolean,
    signal: AbortSignal,
    done: () => void,
  ) => Promise<void>;
}

export class Dispatcher {
  /** Every project not in a job, by when its next job is due (rebuilt at each replan). */
  private readonly queue = new DueQueue<Entry>();
  private readonly inFlight = new Set<Promise<void>>();
  /** Jobs in flight of projects that were slow when their job started. */
  private slowInFlight = 0;
  private readonly abort = new AbortController();
  private tickTimer: NodeJS.Timeout | undefined;
  /** The timer for the next due time between ticks, and when it fires (monotonic ms). */
  private wakeTimer: NodeJS.Timeout | undefined;
  private wakeAtMs = Infinity;

  constructor(private readonly parts: DispatchParts) {
    // Every job in flight, and every API call of a job waiting for its turn or a retry,
    // listens to this one signal; their number is bounded by the jobs, not by a constant.
    setMaxListeners(0, this.abort.signal);
  }

  /** `stop` has been called: nothing is dispatched any more. */
  get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  /** Starts the once-a-second `tick` (Node's timers run on the monotonic clock). */
  start(tick: () => void): void {
    if (this.tickTimer !== undefined) return;
    this.tickTimer = setInterval(tick, TICK_MS);
    // The first tick at once: what is due at the start does not wait a second.
    tick();
  }

  /** Starts the jobs due now, the longest overdue first, while there is room. */
  dispatch(): void {
    const { maxConcurrent, refusals } = this.parts;
    if (this.stopped || this.inFlight.size >= maxConcurrent) return;
    const now = this.parts.monotonic();
    // A refused key: nothing but one probe at a time, once its wait is over.
    const probe = refusals.keyRefused() !== undefined;
    if (probe && refusals.probeWaits(now)) return;
    const slowLimit = slowShare(maxConcurrent);
    const held: Due<Entry>[] = [];
    while (this.inFlight.size < maxConcurrent) {
      const due = this.nextQueued();
      if (due === undefined || due.at > now) break;
      this.queue.pop();
      const entry = due.item;
      // Its activity has aged since it was queued, and its interval grown with it: not yet due.
      if (this.parts.dueAt(entry, now) > now) {
        this.enqueue(entry);
        continue;
      }
      if (entry.slow && this.slowInFlight >= slowLimit) {
        held.push(due);
        continue;
      }
      this.run(entry, now, probe);
      if (probe) break;
    }
    for (const due of held) this.queue.push(due.item, due.at);
    const next = this.nextQueued()?.at ?? Infinity;
    this.wakeAt(probe ? (refusals.keyRefused()?.retryAtMs ?? next) : next, now);
  }

  /** Queues the entry at its due time now (after it changed). */
  enqueue(entry: Entry): void {
    if (entry.busy) return;
    entry.queuedAt = this.parts.dueAt(entry, this.parts.monotonic());
    this.queue.push(entry, entry.queuedAt);
  }

  /** Queues every entry afresh: due times follow the plan, which each replan may change. */
  enqueueAll(): void {
    const items: Due<Entry>[] = [];
    const now = this.parts.monotonic();
    for (const entry of this.parts.entries.values()) {
      if (entry.busy) continue;
      entry.queuedAt = this.parts.dueAt(entry, now);
      items.push({ item: entry, at: entry.queuedAt });
    }
    this.queue.reset(items);
  }

  /** Waits for every job in flight. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /**
   * Stops the tick and aborts the jobs in flight (a poll abandoned this way commits nothing),
   * then waits for them to settle.
   */
  async stop(): Promise<void> {
    clearInterval(this.tickTimer);
    clearTimeout(this.wakeTimer);
    this.wakeTimer = undefined;
    this.abort.abort(new Error("the scheduler is stopping"));
    await this.drain();
  }

  /** The earliest queued entry still due at the time it was queued at (older copies dropped). */
  private nextQueued(): Due<Entry> | undefined {
    for (;;) {
      const due = this.queue.peek();
      if (due === undefined) return undefined;
      const entry = due.item;
      if (due.at === entry.queuedAt && !entry.busy && this.parts.entries.get(entry.id) === entry) {
        return due;
      }
      this.queue.pop();
    }
  }

  private run(entry: Entry, now: number, probe: boolean): void {
    const { refusals } = this.parts;
    entry.busy = true;
    entry.queuedAt = Infinity;
    if (probe) refusals.probeStarted();
    const countedSlow = entry.slow;
    if (countedSlow) this.slowInFlight += 1;
    const job = this.parts.run(entry, now, probe, this.abort.signal, () => {
      entry.busy = false;
      this.enqueue(entry);
      if (probe) refusals.probeEnded();
      if (countedSlow) this.slowInFlight -= 1;
    });
    this.inFlight.add(job);
    void job.finally(() => {
      this.inFlight.delete(job);
      // Only while the tick runs: before `start` (tests, `--once`) jobs run when asked.
      if (this.tickTimer !== undefined) this.dispatch();
    });
  }

  /**
   * Between ticks, a timer for the next due time: a poll starts when it is due, not at the
   * tick after it (only once the tick runs; before `start` jobs run when asked).
   */
  private wakeAt(atMs: number, now: number): void {
    if (this.tickTimer === undefined || !Number.isFinite(atMs)) return;
    if (this.wakeTimer !== undefined && this.wakeAtMs <= atMs) return;
    clearTimeout(this.wakeTimer);
    this.wakeAtMs = atMs;
    this.wakeTimer = setTimeout(
      () => {
        this.wakeTimer = undefined;
        this.wakeAtMs = Infinity;
        this.dispatch();
      },
      Math.max(1, atMs - now),
    );
  }
}
