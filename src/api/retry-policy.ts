import { fullJitterDelay, type BackoffConfig } from "./backoff.js";
import type { AttemptFailure } from "./errors.js";
import type { HttpMethod } from "./routes.js";

/**
 * Transport errors that prove the request never left the client (no connection was made), so
 * even a POST can be repeated without risk of doing its work twice.
 */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * Whether repeating a request that failed this way is safe (real-api-notes: 423 and 503 are
 * always safe; a GET is safe after a network error; POST/PATCH/DELETE are not).
 * - 429, 423, 503: the server says it did not process the request, so any method may repeat.
 * - other 5xx, timeouts, network errors, unreadable answers: only a GET, which changes nothing;
 *   a POST/PATCH/DELETE may have taken effect, and repeating it could, e.g., create a second
 *   endpoint. The exception is a connection that was never established.
 * - other 4xx: the same request would fail the same way.
 */
export function isRetrySafe(
  method: HttpMethod,
  failure: Pick<AttemptFailure, "kind" | "status" | "code">,
): boolean {
  const { kind, status, code } = failure;
  if (kind === "http") {
    if (status === 429 || status === 423 || status === 503) return true;
    return method === "GET" && status !== undefined && status >= 500;
  }
  if (method === "GET") return true;
  return kind === "network" && NOT_SENT_CODES.has(code);
}

/**
 * Failures that are safe to repeat but not worth repeating within the call: an answer larger
 * than the client accepts would come back as large, and an exchange that used up its whole
 * deadline (a server dripping its answer) would hold a request slot for another deadline. The
 * call fails at once; its caller (the next poll) tries again later.
 */
const NOT_WORTH_REPEATING: ReadonlySet<string> = new Set([
  "response_too_large",
  "DEADLINE_EXCEEDED",
]);

/** Whether a retry-safe failure should be retried within the call (see `NOT_WORTH_REPEATING`). */
export function isWorthRepeating(failure: Pick<AttemptFailure, "code">): boolean {
  return !NOT_WORTH_REPEATING.has(failure.code);
}

export interface RetryConfig {
  /** Attempts per call, the first included. */
  readonly maxAttempts: number;
  readonly backoff: BackoffConfig;
  /** Ceiling applied to a server's `Retry-After`. */
  readonly maxRetryAfterMs: number;
}

export interface RetryPlan {
  /** True when the failure is retry-safe and attempts remain. */
  readonly retry: boolean;
  /** How long to wait before the next attempt (also how long a 429 pauses the limiter). */
  readonly delayMs: number;
  readonly delaySource: "retry-after" | "backoff";
}

/**
 * What to do after attempt number `attempt` (from 1) failed: the server's `Retry-After` wins
 * when present (capped), else full-jitter backoff.
 */
export function planRetry(
  attempt: number,
  retryable: boolean,
  retryAfterMs: number | undefined,
  config: RetryConfig,
  random: () => number,
): RetryPlan {
  const retry = retryable && attempt < config.maxAttempts;
  if (retryAfterMs !== undefined) {
    return {
      retry,
      delayMs: Math.min(retryAfterMs, config.maxRetryAfterMs),
      delaySource: "retry-after",
    };
  }
  return {
    retry,
    delayMs: fullJitterDelay(attempt, config.backoff, random),
    delaySource: "backoff",
  };
}
