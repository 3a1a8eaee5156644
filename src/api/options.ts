import { systemClock, type Clock } from "../clock.js";
import type { ApiClientEvents } from "./events.js";
import type { RetryConfig } from "./retry-policy.js";
import { DEFAULT_USER_AGENT } from "./user-agent.js";

export interface ApiClientOptions {
  /** Sent as `Authorization: Bearer <apiKey>`; never appears in an error, event or log. */
  readonly apiKey: string;
  /** Base address including the version segment. Default `https://console.neon.tech/api/v2`. */
  readonly baseUrl?: string;
  /** Default `pgcp-exporter/<package version>`. */
  readonly userAgent?: string;
  readonly retry?: {
    /** Attempts per call, the first included. Default 4. */
    readonly maxAttempts?: number;
    /** Backoff window of the first retry. Default 500 ms. */
    readonly baseDelayMs?: number;
    /** Largest backoff window. Default 30 s. */
    readonly maxDelayMs?: number;
    /** Ceiling on a server's `Retry-After`. Default 60 s. */
    readonly maxRetryAfterMs?: number;
  };
  readonly timeouts?: {
    /** TCP/TLS connect. Default 10 s. */
    readonly connectMs?: number;
    /** From sending the request to the end of the response headers. Default 30 s. */
    readonly headersMs?: number;
    /** Longest silence while the body arrives. Default 30 s. */
    readonly bodyMs?: number;
    /**
     * Longest time for the whole exchange, from sending the request to the last byte of the
     * answer (a body that drips a byte at a time never trips the two above). Default 60 s.
     */
    readonly deadlineMs?: number;
  };
  /** Largest response body accepted, in bytes; a larger one fails the call. Default 8 MiB. */
  readonly maxResponseBytes?: number;
  /** Defaults: the real API's documented limit of 700 requests/minute, bursts of 40. */
  readonly rateLimit?: {
    readonly requestsPerMinute?: number;
    readonly burst?: number;
    /** Requests in flight at once. Default 8. */
    readonly maxConcurrency?: number;
  };
  readonly events?: ApiClientEvents;
  /**
   * Time source: monotonic for every wait and duration, wall for HTTP dates. Default: the system
   * clock.
   */
  readonly clock?: Clock;
  /** Jitter source, a value in [0, 1). Default `Math.random`. */
  readonly random?: () => number;
}

export interface ResolvedOptions {
  readonly apiKey: string;
  readonly origin: string;
  /** The base URL's path without a trailing slash, e.g. `/api/v2`. */
  readonly basePath: string;
  readonly userAgent: string;
  readonly retry: RetryConfig;
  readonly connectTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly deadlineMs: number;
  readonly maxResponseBytes: number;
  readonly refillPerSecond: number;
  readonly burst: number;
  readonly maxConcurrency: number;
  readonly events: ApiClientEvents;
  readonly clock: Clock;
  readonly random: () => number;
}

/** 8 MiB: a page of 1,000 operations is well under 1 MiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

export const DEFAULT_BASE_URL = "https://console.neon.tech/api/v2";

/** Fills in defaults and rejects settings that cannot work, before any socket is opened. */
export function resolveOptions(options: ApiClientOptions): ResolvedOptions {
  if (options.apiKey === "") throw new TypeError("apiKey must not be empty");
  const base = new URL(options.baseUrl ?? DEFAULT_BASE_URL);
  if (base.protocol !== "https:" && base.protocol !== "http:") {
    throw new TypeError(`baseUrl must be an http(s) URL, got ${base.protocol}`);
  }
  const retry = options.retry ?? {};
  const timeouts = options.timeouts ?? {};
  const rate = options.rateLimit ?? {};
  return {
    apiKey: options.apiKey,
    origin: base.origin,
    basePath: base.pathname.replace(/\/+$/, ""),
    userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
    retry: {
      maxAttempts: atLeast("retry.maxAttempts", retry.maxAttempts ?? 4, 1),
      backoff: {
        baseMs: atLeast("retry.baseDelayMs", retry.baseDelayMs ?? 500, 0),
        maxMs: atLeast("retry.maxDelayMs", retry.maxDelayMs ?? 30_000, 0),
      },
      maxRetryAfterMs: atLeast("retry.maxRetryAfterMs", retry.maxRetryAfterMs ?? 60_000, 0),
    },
    connectTimeoutMs: atLeast("timeouts.connectMs", timeouts.connectMs ?? 10_000, 1),
    headersTimeoutMs: atLeast("timeouts.headersMs", timeouts.headersMs ?? 30_000, 1),
    bodyTimeoutMs: atLeast("timeouts.bodyMs", timeouts.bodyMs ?? 30_000, 1),
    deadlineMs: atLeast("timeouts.deadlineMs", timeouts.deadlineMs ?? 60_000, 1),
    maxResponseBytes: atLeast(
      "maxResponseBytes",
      options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      1024,
    ),
    refillPerSecond: positive("rateLimit.requestsPerMinute", rate.requestsPerMinute ?? 700) / 60,
    burst: atLeast("rateLimit.burst", rate.burst ?? 40, 1),
    maxConcurrency: atLeast("rateLimit.maxConcurrency", rate.maxConcurrency ?? 8, 1),
    events: options.events ?? {},
    clock: options.clock ?? systemClock,
    random: options.random ?? Math.random,
  };
}

function atLeast(name: string, value: number, min: number): number {
  if (!Number.isFinite(value) || value < min) {
    throw new RangeError(`${name} must be a finite number >= ${min}, got ${value}`);
  }
  return value;
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new RangeError(`${name} must be a finite number > 0, got ${value}`);
  }
  return value;
}
