import type { AttemptFailure } from "./errors.js";
import { ResponseTooLargeError } from "./transport.js";

/** undici and system codes that mean "waited too long" rather than "the connection failed". */
const TIMEOUT_CODES: ReadonlySet<string> = new Set([
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CONNECT_TIMEOUT",
  "ETIMEDOUT",
  "DEADLINE_EXCEEDED",
]);

/**
 * Describes an error thrown while sending a request or reading its answer (the caller has
 * already ruled out its own abort). Only the code and message are kept: undici errors can hold
 * sockets and request state, which do not belong in an error that gets logged.
 */
export function describeTransportError(error: unknown): AttemptFailure {
  if (error instanceof ResponseTooLargeError) {
    // An answer, but not one to read: the same request would bring the same answer.
    return {
      kind: "invalid_response",
      status: undefined,
      code: "response_too_large",
      detail: error.message,
      serverRequestId: undefined,
      retryAfterMs: undefined,
    };
  }
  const code = errorCode(error);
  return {
    kind: TIMEOUT_CODES.has(code) ? "timeout" : "network",
    status: undefined,
    code,
    detail: error instanceof Error ? error.message : String(error),
    serverRequestId: undefined,
    retryAfterMs: undefined,
  };
}

function errorCode(error: unknown): string {
  if (typeof error === "object" && error !== null && "code" in error) {
    const { code } = error;
    if (typeof code === "string" && code !== "") return code;
  }
  return "UNKNOWN";
}
