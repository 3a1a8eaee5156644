import { abortReason } from "../../../src/clock.js";
import type { Clock } from "../../../src/api/index.js";

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly resolve: () => void;
}

/**
 * A clock whose time moves only when the test says so: `advance(ms)` fires due sleeps in time
 * order, letting promise callbacks run between them.
 */
export class ManualClock implements Clock {
  #now: number;
  #seq = 0;
  #timers: Timer[] = [];

  constructor(startMs = Date.UTC(2025, 0, 1)) {
    this.#now = startMs;
  }

  /** Wall and monotonic time move together here: the test steps neither on its own. */
  wall(): number {
    return this.#now;
  }

  monotonic(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted === true) {
        reject(abortReason(signal));
        return;
      }
      const timer: Timer = { at: this.#now + ms, seq: this.#seq++, resolve };
      this.#timers.push(timer);
      signal?.addEventListener(
        "abort",
        () => {
          this.#timers = this.#timers.filter((t) => t !== timer);
          reject(abortReason(signal));
        },
        { once: true },
      );
    });
  }

  /** Pending sleeps. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    for (;;) {
      await flushPromises();
      const next = [...this.#timers].sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (next === undefined || next.at > end) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#now = Math.max(this.#now, next.at);
      next.resolve();
    }
    this.#now = end;
    await flushPromises();
  }
}

/**
 * A clock on which every sleep completes almost at once (on the next turn of the event loop),
 * moving time to the moment it was due: the client's timing decisions (backoff, Retry-After,
 * limiter waits) run in full without waiting for them.
 */
export class SkippingClock implements Clock {
  #now: number;
  readonly sleeps: number[] = [];

  constructor(startMs = Date.UTC(2025, 0, 1)) {
    this.#now = startMs;
  }

  /** Wall and monotonic time move together here: the test steps neither on its own. */
  wall(): number {
    return this.#now;
  }

  monotonic(): number {
    return this.#now;
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    const due = this.#now + ms;
    this.sleeps.push(ms);
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (signal?.aborted === true) throw abortReason(signal);
    this.#now = Math.max(this.#now, due);
  }
}

/** Lets every queued promise callback run. */
export async function flushPromises(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
