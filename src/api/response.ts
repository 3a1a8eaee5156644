import type { z } from "zod";
import { errorBodySchema } from "../contract/index.js";
import type { AttemptFailure } from "./errors.js";
import { parseRetryAfter } from "./retry-after.js";
import type { RawResponse } from "./transport.js";

export type AttemptResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly failure: AttemptFailure };

/**
 * An extra consistency rule for a response that matched its schema: returns a description of
 * what is wrong, or undefined when the response is fine.
 */
export type ResponseCheck<T> = (value: T) => string | undefined;

/**
 * Reads one complete HTTP response: a 2xx body must be JSON that matches `schema` (unknown
 * fields and enum values pass, as the contract's schemas allow); anything else becomes a
 * failure naming the first problem. `referenceMs` dates an HTTP-date `Retry-After`.
 */
export function interpretResponse<T>(
  response: RawResponse,
  schema: z.ZodType<T>,
  referenceMs: number,
  check?: ResponseCheck<T>,
): AttemptResult<T> {
  const { status } = response;
  if (status < 200 || status > 299)
    return { ok: false, failure: httpFailure(response, referenceMs) };
  // 204 No Content (the real API's answer to deleting an endpoint that is already gone) reads
  // as `null`: only a schema that allows null accepts it.
  const json: JsonResult =
    status === 204 ? { ok: true, value: null } : parseJson(response.body.toString("utf8"));
  if (!json.ok) return invalid(status, "invalid_json", `body is not JSON: ${json.reason}`);
  const parsed = schema.safeParse(json.value);
  if (!parsed.success) {
    return invalid(status, "schema_mismatch", firstIssue(parsed.error));
  }
  const problem = check?.(parsed.data);
  if (problem !== undefined) return invalid(status, "inconsistent_response", problem);
  return { ok: true, value: parsed.data };
}

/** An error status: the real API's body is `{code, message, request_id}`; proxies send HTML. */
function httpFailure(response: RawResponse, referenceMs: number): AttemptFailure {
  const json = parseJson(response.body.toString("utf8"));
  const body = json.ok ? errorBodySchema.safeParse(json.value) : undefined;
  const retryAfterMs = parseRetryAfter(response.headers["retry-after"], referenceMs);
  if (body?.success === true) {
    return {
      kind: "http",
      status: response.status,
      code: body.data.code,
      detail: body.data.message === "" ? "(no message)" : body.data.message,
      serverRequestId: body.data.request_id,
      retryAfterMs,
    };
  }
  return {
    kind: "http",
    status: response.status,
    code: "",
    detail: "(no error body)",
    serverRequestId: undefined,
    retryAfterMs,
  };
}

function invalid(
  status: number,
  code: string,
  detail: string,
): { readonly ok: false; readonly failure: AttemptFailure } {
  return {
    ok: false,
    failure: {
      kind: "invalid_response",
      status,
      code,
      detail,
      serverRequestId: undefined,
      retryAfterMs: undefined,
    },
  };
}

type JsonResult = { ok: true; value: unknown } | { ok: false; reason: string };

function parseJson(text: string): JsonResult {
  if (text.trim() === "") return { ok: false, reason: "empty body" };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    // V8's message quotes the body, which may echo a secret (a proxy that repeats the request's
    // Authorization header): say only where the body stops being JSON, and how long it is.
    const message = error instanceof Error ? error.message : "";
    const position = /at position (\d+)/.exec(message)?.[1];
    const where =
      position !== undefined
        ? `invalid at byte ${position}`
        : /end of (JSON )?input|Unterminated/i.test(message)
          ? "cut short"
          : "invalid from its start";
    return { ok: false, reason: `${where} (${text.length} bytes, not quoted)` };
  }
}

/** "at operations.3.created_at: Invalid ISO datetime" — the first thing zod found wrong. */
function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return "does not match the schema";
  const path = issue.path.map(String).join(".");
  return `at ${path === "" ? "(root)" : path}: ${issue.message}`;
}
