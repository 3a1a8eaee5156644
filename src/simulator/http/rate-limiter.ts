/** The real API's documented limits: 700 requests per minute, bursts of 40 per second per route. */
export const REAL_API_RATE_LIMIT = { perMinute: 700, burstPerSecond: 40 } as const;

export interface RateLimitOptions {
  readonly perMinute: number;
  readonly burstPerSecond: number;
}

/** A token bucket: `capacity` tokens, refilled continuously at `perSecond`. */
export class TokenBucket {
  private tokens: number;
  private lastMs: number;

  constructor(
    private readonly capacity: number,
    private readonly perSecond: number,
    nowMs: number,
  ) {
    this.tokens = capacity;
    this.lastMs = nowMs;
  }

  /** Seconds until a token is available (0 when one is). */
  waitSeconds(nowMs: number): number {
    this.refill(nowMs);
    return this.tokens >= 1 ? 0 : (1 - this.tokens) / this.perSecond;
  }

  take(nowMs: number): void {
    this.refill(nowMs);
    this.tokens -= 1;
  }

  private refill(nowMs: number): void {
    const elapsed = Math.max(0, nowMs - this.lastMs) / 1000;
    this.tokens = Math.min(this.capacity, this.tokens + elapsed * this.perSecond);
    this.lastMs = nowMs;
  }
}

export type RateDecision =
  { readonly allowed: true } | { readonly allowed: false; readonly retryAfterSeconds: number };

/**
 * The API's rate limit, per account (the owner of the key: a user or an organisation): one
 * bucket holding a minute's allowance, and one per route holding a second's burst. A request
 * needs a token from both of its account's; a refused one takes none. It runs on the wall
 * clock, not the simulated one: it limits how fast clients really call, and a client honouring
 * `Retry-After` must find the bucket refilled after really waiting, whatever the simulated
 * clock does.
 */
export class RateLimiter {
  private readonly accounts = new Map<string, TokenBucket>();
  private readonly routes = new Map<string, TokenBucket>();

  constructor(
    private readonly options: RateLimitOptions,
    private readonly nowMs: () => number = () => performance.now(),
  ) {}

  /** Takes a token for a request of `account` (default: a single account) on `route`. */
  check(route: string, account = ""): RateDecision {
    const now = this.nowMs();
    const minute = bucketOf(this.accounts, account, () => {
      return new TokenBucket(this.options.perMinute, this.options.perMinute / 60, now);
    });
    const burst = bucketOf(this.routes, `${account} ${route}`, () => {
      return new TokenBucket(this.options.burstPerSecond, this.options.burstPerSecond, now);
    });
    const wait = Math.max(minute.waitSeconds(now), burst.waitSeconds(now));
    if (wait > 0) return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(wait)) };
    minute.take(now);
    burst.take(now);
    return { allowed: true };
  }
}

function bucketOf(
  buckets: Map<string, TokenBucket>,
  key: string,
  create: () => TokenBucket,
): TokenBucket {
  let bucket = buckets.get(key);
  if (bucket === undefined) {
    bucket = create();
    buckets.set(key, bucket);
  }
  return bucket;
}
