import type { ApiErrorKind } from "./errors.js";
import type { HttpMethod, RouteName } from "./routes.js";

/** An HTTP response arrived (any status) and its body was read. */
export interface ResponseEvent {
  readonly route: RouteName;
  readonly method: HttpMethod;
  readonly status: number;
  readonly durationMs: number;
  /** 1 for the first attempt of a call, 2 for its first retry, … */
  readonly attempt: number;
  readonly requestId: string;
}

/** No usable HTTP response arrived: the connection failed or a timeout struck. */
export interface TransportErrorEvent {
  readonly route: RouteName;
  readonly method: HttpMethod;
  readonly kind: Extract<ApiErrorKind, "network" | "timeout">;
  readonly code: string;
  readonly durationMs: number;
  readonly attempt: number;
  readonly requestId: string;
}

/** A failed attempt will be repeated after `delayMs`. */
export interface RetryEvent {
  readonly route: RouteName;
  readonly method: HttpMethod;
  /** The attempt that failed. */
  readonly attempt: number;
  /** `http_<status>`, `network`, `timeout` or `invalid_response`: a bounded set of values. */
  readonly reason: string;
  readonly delayMs: number;
  readonly delaySource: "retry-after" | "backoff";
}

/** A request queued at the shared limiter before it could be sent. */
export interface RateLimitWaitEvent {
  readonly route: RouteName;
  readonly waitedMs: number;
}

/** A 429 paused the shared limiter for every caller. */
export interface RateLimitPauseEvent {
  readonly route: RouteName;
  readonly pauseMs: number;
}

/**
 * Observability hooks. The client knows nothing of metrics or logs; whoever does subscribes
 * here. Hooks run synchronously on the request path: keep them cheap. An exception thrown by a
 * hook is swallowed, so that observing a call can never fail it.
 */
export interface ApiClientEvents {
  onResponse?(event: ResponseEvent): void;
  onTransportError?(event: TransportErrorEvent): void;
  onRetry?(event: RetryEvent): void;
  onRateLimitWait?(event: RateLimitWaitEvent): void;
  onRateLimitPause?(event: RateLimitPauseEvent): void;
}

type Payload<K extends keyof ApiClientEvents> = Parameters<NonNullable<ApiClientEvents[K]>>[0];

/** Calls one hook if it is set, ignoring what it throws. */
export function emit<K extends keyof ApiClientEvents>(
  events: ApiClientEvents,
  name: K,
  payload: Payload<K>,
): void {
  const hook = events[name] as ((event: Payload<K>) => void) | undefined;
  if (hook === undefined) return;
  try {
    hook.call(events, payload);
  } catch {
    // Deliberately ignored: see ApiClientEvents.
  }
}
