import { abortReason, type Clock } from "../clock.js";
import { TokenBucket } from "./token-bucket.js";

export interface RateLimiterOptions {
  /** Sustained rate (tokens per second). */
  readonly refillPerSecond: number;
  /** Largest burst (bucket capacity). */
  readonly burst: number;
  /** Most requests in flight at once. */
  readonly maxConcurrency: number;
  readonly clock: Clock;
}

/** Permission to send one request; `release()` it when the response has been read. */
export interface Permit {
  /** How long this caller queued, in milliseconds (0 when it went straight through). */
  readonly waitedMs: number;
  release(): void;
}

export interface RateLimiterStats {
  /** Whole tokens in the bucket now. */
  readonly tokensRemaining: number;
  readonly inFlight: number;
  readonly queued: number;
  readonly granted: number;
  /** Sum of every caller's wait, in milliseconds. */
  readonly totalWaitedMs: number;
}

interface Waiter {
  readonly enqueuedAt: number;
  readonly grant: (permit: Permit) => void;
  readonly fail: (error: Error) => void;
}

/**
 * The one gate every request of a client passes (retries included): a token bucket for the
 * request rate and a cap on requests in flight. Callers are served first come, first served.
 */
export class RateLimiter {
  readonly #bucket: TokenBucket;
  readonly #clock: Clock;
  readonly #maxConcurrency: number;
  readonly #queue: Waiter[] = [];
  /** Cancels the pending wake-up timer on close. */
  readonly #closing = new AbortController();
  #inFlight = 0;
  #granted = 0;
  #totalWaitedMs = 0;
  #wakeScheduled = false;

  constructor(options: RateLimiterOptions) {
    if (!(options.maxConcurrency >= 1)) throw new RangeError("maxConcurrency must be >= 1");
    this.#clock = options.clock;
    this.#maxConcurrency = options.maxConcurrency;
    this.#bucket = new TokenBucket({
      capacity: options.burst,
      refillPerSecond: options.refillPerSecond,
      now: () => options.clock.monotonic(),
    });
  }

  /** Waits for a token and a free slot; rejects with the signal's reason if it aborts first. */
  acquire(signal?: AbortSignal): Promise<Permit> {
    if (this.#closing.signal.aborted) return Promise.reject(closedError());
    if (signal?.aborted === true) return Promise.reject(abortReason(signal));
    // The common case, without a queue entry: a clock tick between enqueueing and granting
    // would otherwise be reported as a 1 ms wait.
    if (this.#queue.length === 0 && this.#inFlight < this.#maxConcurrency) {
      if (this.#bucket.tryTake() === 0) return Promise.resolve(this.#grant(0));
    }
    return new Promise<Permit>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.#queue.indexOf(waiter);
        if (index >= 0) this.#queue.splice(index, 1);
        reject(abortReason(signal));
      };
      const waiter: Waiter = {
        enqueuedAt: this.#clock.monotonic(),
        grant: (permit) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(permit);
        },
        fail: (error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#queue.push(waiter);
      this.#pump();
    });
  }

  /** Holds back every caller for `ms` (after a 429: the limit is shared by the whole account). */
  pause(ms: number): void {
    this.#bucket.pauseUntil(this.#clock.monotonic() + ms);
  }

  stats(): RateLimiterStats {
    return {
      tokensRemaining: this.#bucket.available(),
      inFlight: this.#inFlight,
      queued: this.#queue.length,
      granted: this.#granted,
      totalWaitedMs: this.#totalWaitedMs,
    };
  }

  /** Rejects every queued caller; later `acquire` calls reject at once. */
  close(): void {
    this.#closing.abort();
    for (const waiter of this.#queue.splice(0)) waiter.fail(closedError());
  }

  #pump(): void {
    while (this.#queue.length > 0 && this.#inFlight < this.#maxConcurrency) {
      const waitMs = this.#bucket.tryTake();
      if (waitMs > 0) {
        this.#wakeAfter(waitMs);
        return;
      }
      const waiter = this.#queue.shift();
      if (waiter === undefined) return;
      waiter.grant(this.#grant(Math.max(0, this.#clock.monotonic() - waiter.enqueuedAt)));
    }
    // When the slots are full, the next release pumps again.
  }

  #grant(waitedMs: number): Permit {
    this.#inFlight += 1;
    this.#granted += 1;
    this.#totalWaitedMs += waitedMs;
    return {
      waitedMs,
      release: once(() => {
        this.#release();
      }),
    };
  }

  #release(): void {
    this.#inFlight -= 1;
    this.#pump();
  }

  /** One timer at a time: tokens only ever become available later, never sooner. */
  #wakeAfter(ms: number): void {
    if (this.#wakeScheduled) return;
    this.#wakeScheduled = true;
    this.#clock.sleep(ms, this.#closing.signal).then(
      () => {
        this.#wakeScheduled = false;
        this.#pump();
      },
      () => undefined, // closed: nobody is left to wake
    );
  }
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

function closedError(): Error {
  return new Error("the API client is closed");
}
