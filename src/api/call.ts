import { randomUUID } from "node:crypto";
import type { z } from "zod";
import { abortReason } from "../clock.js";
import { toApiError, type AttemptFailure } from "./errors.js";
import { emit } from "./events.js";
import type { ResolvedOptions } from "./options.js";
import type { RateLimiter } from "./rate-limiter.js";
import { interpretResponse, type AttemptResult, type ResponseCheck } from "./response.js";
import { isRetrySafe, isWorthRepeating, planRetry } from "./retry-policy.js";
import type { HttpMethod, RouteName } from "./routes.js";
import type { ServerClock } from "./server-clock.js";
import type { RawResponse, Transport } from "./transport.js";
import type { Turns } from "./turns.js";
import { describeTransportError } from "./transport-errors.js";

/** One logical call of the API: what to send and what a good answer looks like. */
export interface CallSpec<T> {
  readonly route: RouteName;
  readonly method: HttpMethod;
  /** Path below the base URL, e.g. `/projects/p-1/operations`. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | undefined>>;
  /** Serialised as JSON. */
  readonly body?: unknown;
  readonly schema: z.ZodType<T>;
  readonly check?: ResponseCheck<T>;
  readonly signal?: AbortSignal | undefined;
}

/** Makes one call with the client's transport, limiter and policy (`executeCall`, bound). */
export type Call = <T>(spec: CallSpec<T>) => Promise<T>;

export interface CallDeps {
  readonly options: ResolvedOptions;
  readonly transport: Transport;
  readonly limiter: RateLimiter;
  /** An answer is read in a turn of the event loop of its own. */
  readonly turns: Turns;
  /** The API's clock, kept from the `Date` of every answer. */
  readonly serverClock: ServerClock;
}

/**
 * Performs one logical call: attempts go through the shared limiter, failed ones are retried
 * while `isRetrySafe` allows and attempts remain, and the last failure is thrown as an
 * `ApiError`. An abort of `spec.signal` rejects with the signal's reason, not an ApiError.
 *
 * The loop is written by hand rather than with undici's retry interceptor: the interceptor
 * repeats requests inside the dispatcher, where they would bypass the shared token bucket and
 * concurrency cap, and it cannot see what is decided above the transport (an unreadable or
 * schema-violating body is retryable for a GET) nor pause the shared limiter on a 429.
 *
 * All attempts of one call carry the same `X-Request-ID`, so that the server's logs of a call
 * and its retries can be found together; events carry the attempt number to tell them apart.
 */
export async function executeCall<T>(deps: CallDeps, spec: CallSpec<T>): Promise<T> {
  const { options, limiter } = deps;
  const requestId = randomUUID();
  for (let attempt = 1; ; attempt++) {
    const permit = await limiter.acquire(spec.signal);
    if (permit.waitedMs > 0) {
      emit(options.events, "onRateLimitWait", { route: spec.route, waitedMs: permit.waitedMs });
    }
    let result: AttemptResult<T>;
    try {
      result = await attemptOnce(deps, spec, requestId, attempt);
    } finally {
      permit.release();
    }
    if (result.ok) return result.value;

    const { failure } = result;
    const retryable = isRetrySafe(spec.method, failure);
    const plan = planRetry(
      attempt,
      retryable && isWorthRepeating(failure),
      failure.retryAfterMs,
      options.retry,
      options.random,
    );
    if (failure.status === 429) {
      // The limit is per account: every caller of this client slows down, not just this one.
      limiter.pause(plan.delayMs);
      emit(options.events, "onRateLimitPause", { route: spec.route, pauseMs: plan.delayMs });
    }
    if (!plan.retry) {
      throw toApiError(failure, {
        route: spec.route,
        method: spec.method,
        requestId,
        attempts: attempt,
        retryable,
        secret: options.apiKey,
      });
    }
    emit(options.events, "onRetry", {
      route: spec.route,
      method: spec.method,
      attempt,
      reason: retryReason(failure),
      delayMs: plan.delayMs,
      delaySource: plan.delaySource,
    });
    await options.clock.sleep(plan.delayMs, spec.signal);
  }
}

async function attemptOnce<T>(
  deps: CallDeps,
  spec: CallSpec<T>,
  requestId: string,
  attempt: number,
): Promise<AttemptResult<T>> {
  const { options, transport } = deps;
  const { clock, events } = options;
  const started = clock.monotonic();
  const common = { route: spec.route, method: spec.method, attempt, requestId };
  let response: RawResponse;
  try {
    response = await transport.send({
      method: spec.method,
      path: options.basePath + spec.path + queryString(spec.query),
      headers: requestHeaders(options, requestId, spec.body !== undefined),
      body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
      headersTimeoutMs: options.headersTimeoutMs,
      bodyTimeoutMs: options.bodyTimeoutMs,
      deadlineMs: options.deadlineMs,
      maxResponseBytes: options.maxResponseBytes,
      signal: spec.signal,
    });
  } catch (error) {
    if (spec.signal?.aborted === true) throw abortReason(spec.signal);
    const failure = describeTransportError(error);
    emit(events, "onTransportError", {
      ...common,
      kind: failure.kind === "timeout" ? "timeout" : "network",
      code: failure.code,
      durationMs: clock.monotonic() - started,
    });
    return { ok: false, failure };
  }
  const received = clock.monotonic();
  const serverMs = deps.serverClock.observe(response.headers, received);
  emit(events, "onResponse", {
    ...common,
    status: response.status,
    durationMs: received - started,
  });
  // What follows (parsing, validating, and the caller's work with the answer up to its next
  // wait) takes a turn of its own: answers arriving together do not hold the event loop at once.
  await deps.turns.take();
  // A Retry-After date is read against the answer's own Date where it has one.
  return interpretResponse(response, spec.schema, serverMs ?? clock.wall(), spec.check);
}

function requestHeaders(
  options: ResolvedOptions,
  requestId: string,
  hasBody: boolean,
): Record<string, string> {
  return {
    authorization: `Bearer ${options.apiKey}`,
    accept: "application/json",
    "user-agent": options.userAgent,
    "x-request-id": requestId,
    ...(hasBody ? { "content-type": "application/json" } : {}),
  };
}

function queryString(query: CallSpec<unknown>["query"]): string {
  if (query === undefined) return "";
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.set(key, String(value));
  }
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}

function retryReason(failure: AttemptFailure): string {
  return failure.kind === "http" ? `http_${failure.status ?? "unknown"}` : failure.kind;
}
