import type { HttpMethod, RouteName } from "./routes.js";

/**
 * What went wrong: the server answered with an error status (`http`), no answer arrived
 * (`network`, `timeout`), or the answer could not be read or did not match the contract
 * (`invalid_response`).
 */
export type ApiErrorKind = "http" | "network" | "timeout" | "invalid_response";

/** How one attempt failed, before it is known whether the call as a whole gives up. */
export interface AttemptFailure {
  readonly kind: ApiErrorKind;
  /** HTTP status, or undefined when no response arrived. */
  readonly status: number | undefined;
  /** The server's error code (may be empty), a transport error code, or a validation code. */
  readonly code: string;
  /** Human-readable detail: the server's message, the transport error, or the first issue. */
  readonly detail: string;
  /** The request id the server reported in its error body, if any. */
  readonly serverRequestId: string | undefined;
  /** The delay the server asked for in `Retry-After`, uncapped. */
  readonly retryAfterMs: number | undefined;
}

/** What an `ApiError` says besides its message: how it is built, and what it serialises to. */
export type ApiErrorFields = Pick<
  ApiError,
  "kind" | "status" | "code" | "requestId" | "route" | "method" | "retryable" | "attempts"
>;

/** The one error type of the API client. It never holds the API key. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly kind: ApiErrorKind;
  /** HTTP status, or undefined when no response arrived. */
  readonly status: number | undefined;
  /** The server's error code (may be empty), a transport error code, or a validation code. */
  readonly code: string;
  /** The server's request id when it reported one, else the `X-Request-ID` the client sent. */
  readonly requestId: string;
  readonly route: RouteName;
  readonly method: HttpMethod;
  /** Whether repeating the request is safe (see `retry-policy.ts`), not whether it will work. */
  readonly retryable: boolean;
  /** How many attempts were made before giving up. */
  readonly attempts: number;

  constructor(message: string, fields: ApiErrorFields) {
    super(message);
    this.kind = fields.kind;
    this.status = fields.status;
    this.code = fields.code;
    this.requestId = fields.requestId;
    this.route = fields.route;
    this.method = fields.method;
    this.retryable = fields.retryable;
    this.attempts = fields.attempts;
  }

  /** Structured loggers serialise this; `message` is not an enumerable property of an Error. */
  toJSON(): ApiErrorFields & { name: string; message: string } {
    return {
      name: this.name,
      message: this.message,
      kind: this.kind,
      status: this.status,
      code: this.code,
      requestId: this.requestId,
      route: this.route,
      method: this.method,
      retryable: this.retryable,
      attempts: this.attempts,
    };
  }
}

export interface ApiErrorContext {
  readonly route: RouteName;
  readonly method: HttpMethod;
  /** The `X-Request-ID` the client sent. */
  readonly requestId: string;
  readonly attempts: number;
  readonly retryable: boolean;
  /** Removed from every text the error carries, wherever the server or a library put it. */
  readonly secret: string;
}

/** Builds the `ApiError` for a failed attempt. */
export function toApiError(failure: AttemptFailure, context: ApiErrorContext): ApiError {
  const clean = (text: string): string => redact(text, context.secret);
  const requestId = clean(failure.serverRequestId ?? context.requestId);
  const code = clean(failure.code);
  const detail = clean(failure.detail);
  // A code the detail already names (`connect ECONNREFUSED …`) is not said twice.
  const tag = detail.split(/[^\w]+/).includes(code) ? "" : code;
  const message =
    `${context.route}: ${headline(failure.kind, failure.status, tag)}: ${detail}` +
    ` (request id ${requestId}, attempt ${context.attempts})`;
  return new ApiError(message, {
    kind: failure.kind,
    status: failure.status,
    code,
    requestId,
    route: context.route,
    method: context.method,
    retryable: context.retryable,
    attempts: context.attempts,
  });
}

function headline(kind: ApiErrorKind, status: number | undefined, code: string): string {
  const tag = code === "" ? "" : ` [${code}]`;
  const http = status === undefined ? "" : ` to HTTP ${status}`;
  switch (kind) {
    case "http":
      return `HTTP ${status ?? "?"}${tag}`;
    case "network":
      return `network error${tag}`;
    case "timeout":
      return `timed out${tag}`;
    case "invalid_response":
      return `invalid response${http}${tag}`;
  }
}

const REDACTED = "[REDACTED]";

/** `text` with every occurrence of `secret` replaced. */
function redact(text: string, secret: string): string {
  return secret === "" ? text : text.split(secret).join(REDACTED);
}
