/**
 * Tolerance for floating-point refill: a caller that waited exactly the announced time must
 * get its token even if the sum came out at 0.9999999999.
 */
const ROUNDING = 1e-9;

export interface TokenBucketOptions {
  /** The most tokens the bucket holds: the largest burst. */
  readonly capacity: number;
  /** Tokens added per second: the sustained rate. */
  readonly refillPerSecond: number;
  /** Current time in milliseconds; injectable so decisions can be tested without waiting. */
  readonly now: () => number;
}

/**
 * A token bucket: it starts full, refills continuously at `refillPerSecond` up to `capacity`,
 * and each request takes one token. Over any interval of t seconds it grants at most
 * `capacity + refillPerSecond × t` tokens. It only decides; waiting is the caller's business.
 */
export class TokenBucket {
  readonly #capacity: number;
  readonly #perMs: number;
  readonly #now: () => number;
  #tokens: number;
  /** Time up to which refill has been accounted; in the future while paused. */
  #refilledAt: number;

  constructor(options: TokenBucketOptions) {
    if (!(options.capacity >= 1)) throw new RangeError("token bucket capacity must be >= 1");
    if (!(options.refillPerSecond > 0))
      throw new RangeError("token bucket refill rate must be > 0");
    this.#capacity = options.capacity;
    this.#perMs = options.refillPerSecond / 1000;
    this.#now = options.now;
    this.#tokens = options.capacity;
    this.#refilledAt = options.now();
  }

  /**
   * Takes a token and returns 0 if one is available; otherwise takes nothing and returns how
   * many milliseconds until one will be.
   */
  tryTake(): number {
    const now = this.#now();
    this.#refill(now);
    if (now < this.#refilledAt) return this.#refilledAt - now + this.#msUntilOneToken();
    if (this.#tokens >= 1 - ROUNDING) {
      this.#tokens = Math.max(0, this.#tokens - 1);
      return 0;
    }
    return this.#msUntilOneToken();
  }

  /** Whole tokens available right now. */
  available(): number {
    this.#refill(this.#now());
    return Math.floor(this.#tokens);
  }

  /**
   * Grants nothing until `untilMs`, and restarts refilling from empty then: after a server's
   * 429 the client should resume at the sustained rate, not with a full burst.
   */
  pauseUntil(untilMs: number): void {
    this.#refill(this.#now());
    if (untilMs <= this.#refilledAt) return;
    this.#tokens = 0;
    this.#refilledAt = untilMs;
  }

  #refill(now: number): void {
    // A clock that steps back (or a pause that has not ended) adds nothing.
    if (now <= this.#refilledAt) return;
    this.#tokens = Math.min(this.#capacity, this.#tokens + (now - this.#refilledAt) * this.#perMs);
    this.#refilledAt = now;
  }

  #msUntilOneToken(): number {
    return this.#tokens >= 1 - ROUNDING ? 0 : Math.ceil((1 - this.#tokens) / this.#perMs);
  }
}
