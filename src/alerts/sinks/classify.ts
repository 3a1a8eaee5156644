/**
 * What one delivery attempt's outcome means for the notifier: a pure mapping from an HTTP reply
 * (or a transport failure) to a `SendResult`. The `detail` it writes is built only from the
 * status code, an error code, Slack's short error word and PagerDuty's own account of a refused
 * event (its `message` and `errors`, flattened and cut): never from the URL, a header value or
 * any other body. A sink passes every detail through its redactor all the same.
 *
 * | outcome                                   | reason       | permanent |
 * | ----------------------------------------- | ------------ | --------- |
 * | 2xx (Slack: body `ok`)                    | ok           |           |
 * | Slack 2xx, known error word (`no_text`…)  | client_error | yes       |
 * | Slack 2xx, any other body                 | server_error | no        |
 * | PagerDuty 400 (`invalid event`)           | client_error | yes (1)   |
 * | 3xx (redirects are not followed)          | client_error | yes       |
 * | 408                                       | timeout      | no        |
 * | 409, 425                                  | client_error | no        |
 * | 429                                       | rate_limited | no        |
 * | other 4xx                                 | client_error | yes       |
 * | 5xx (and anything else)                   | server_error | no        |
 * | timeout codes, the attempt's deadline     | timeout      | no        |
 * | the caller's signal aborted               | timeout      | no        |
 * | any other transport error                 | network      | no        |
 *
 * A `Retry-After` (seconds or HTTP date, capped) is passed on with every retryable reply.
 *
 * (1) With PagerDuty's `message` and `errors` in the detail and as the dead letter's reason.
 */
import { parseRetryAfter } from "../../api/retry-after.js";
import { parseHttpDate } from "../../api/server-clock.js";
import type { SendResult } from "./sink.js";
import { truncatePlain } from "./mrkdwn.js";

export type FailureReason = Extract<SendResult, { ok: false }>["reason"];
export type SendFailure = Extract<SendResult, { ok: false }>;

export type ReplyHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/** How one attempt ended, before interpretation. */
export type HttpOutcome =
  | {
      readonly type: "response";
      readonly status: number;
      /** Lower-case names, as undici and node:http give them. */
      readonly headers: ReplyHeaders;
      /** The start of the body (bounded), decoded as UTF-8. */
      readonly body: string;
    }
  /** The attempt's own deadline passed. */
  | { readonly type: "deadline"; readonly timeoutMs: number }
  /** The caller's signal aborted the attempt (e.g. shutdown). */
  | { readonly type: "aborted" }
  /** The request could not be sent or its answer not read; `code` is undici's or the system's. */
  | { readonly type: "error"; readonly code: string };

export type ReplyFlavour = "slack" | "webhook" | "pagerduty";

export interface ClassifyOptions {
  /** For an HTTP-date `Retry-After`. */
  readonly nowMs: number;
  /** Longest `Retry-After` honoured; longer ones are cut to this. Default 10 minutes. */
  readonly maxRetryAfterMs?: number | undefined;
}

export const DEFAULT_MAX_RETRY_AFTER_MS = 10 * 60_000;

/** undici and system codes that mean "waited too long" rather than "could not connect". */
const TIMEOUT_CODES: ReadonlySet<string> = new Set([
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CONNECT_TIMEOUT",
  "ETIMEDOUT",
  "ESOCKETTIMEDOUT",
]);

/**
 * Slack's documented incoming-webhook errors that no retry can fix (the payload or the webhook
 * itself is wrong). Slack normally sends them with a 4xx status; when one arrives with a 2xx it
 * is still a permanent client error.
 */
export const SLACK_PERMANENT_ERRORS: ReadonlySet<string> = new Set([
  "invalid_payload",
  "invalid_blocks",
  "invalid_blocks_format",
  "invalid_attachments",
  "no_text",
  "missing_text_or_fallback_or_attachments",
  "too_many_attachments",
  "msg_too_long",
  "user_not_found",
  "channel_not_found",
  "channel_is_archived",
  "action_prohibited",
  "posting_to_general_channel_denied",
  "invalid_token",
  "token_revoked",
  "no_service",
  "no_service_id",
  "no_team",
  "team_disabled",
  "invalid_team",
]);

export function classifyOutcome(
  outcome: HttpOutcome,
  flavour: ReplyFlavour,
  options: ClassifyOptions,
): SendResult {
  switch (outcome.type) {
    case "response":
      return flavour === "slack"
        ? classifySlackReply(outcome, options)
        : flavour === "pagerduty"
          ? classifyPagerDutyReply(outcome, options)
          : classifyReply(outcome, options);
    case "deadline":
      return failure("timeout", false, `timed out after ${outcome.timeoutMs} ms`);
    case "aborted":
      return failure("timeout", false, "aborted");
    case "error":
      return classifyErrorCode(outcome.code);
  }
}

/** A generic HTTP reply: the status decides. */
export function classifyReply(
  reply: { readonly status: number; readonly headers: ReplyHeaders },
  options: ClassifyOptions,
  word?: string,
): SendResult {
  const { status } = reply;
  const detail = word === undefined ? `HTTP ${status}` : `HTTP ${status} ${word}`;
  if (status >= 200 && status < 300) return { ok: true };
  const retryAfterMs = retryAfter(reply.headers, options);
  if (status === 429) return failure("rate_limited", false, detail, retryAfterMs);
  if (status === 408) return failure("timeout", false, detail, retryAfterMs);
  if (status === 409 || status === 425) return failure("client_error", false, detail, retryAfterMs);
  if (status >= 300 && status < 400) {
    return failure("client_error", true, `${detail} (redirects are not followed)`);
  }
  if (status >= 400 && status < 500) return failure("client_error", true, detail);
  return failure("server_error", false, detail, retryAfterMs);
}

/**
 * A Slack incoming-webhook reply: success is a 2xx whose body is `ok` (surrounding whitespace
 * ignored). A 2xx with one of Slack's permanent error words is a permanent client error; a 2xx
 * with anything else (empty, HTML from a proxy, an unknown word) is treated as a retryable
 * server error: the message may not have been posted, and a duplicate beats a lost alert.
 */
export function classifySlackReply(
  reply: { readonly status: number; readonly headers: ReplyHeaders; readonly body: string },
  options: ClassifyOptions,
): SendResult {
  const text = reply.body.trim();
  const word = slackErrorWord(text);
  if (reply.status >= 200 && reply.status < 300) {
    if (text === "ok") return { ok: true };
    const detail = `HTTP ${reply.status} ${word ?? "unexpected reply"}`;
    if (word !== undefined && SLACK_PERMANENT_ERRORS.has(word)) {
      return failure("client_error", true, detail);
    }
    return failure("server_error", false, detail, retryAfter(reply.headers, options));
  }
  return classifyReply(reply, options, word);
}

/** The most of PagerDuty's account of a refused event kept in a detail. */
export const MAX_REFUSAL_TEXT = 500;

/**
 * A PagerDuty Events API v2 reply: 202 accepts the event; 400 refuses it for good (the event is
 * invalid, or the routing key), with PagerDuty's `message` and `errors` as the detail and the
 * dead letter's reason; 429 and 5xx are retried (`Retry-After` honoured); anything else as
 * any receiver's reply.
 */
export function classifyPagerDutyReply(
  reply: { readonly status: number; readonly headers: ReplyHeaders; readonly body: string },
  options: ClassifyOptions,
): SendResult {
  if (reply.status !== 400) return classifyReply(reply, options);
  const words = pagerDutyRefusal(reply.body);
  const detail = words === undefined ? "HTTP 400" : `HTTP 400 ${words}`;
  return { ...failure("client_error", true, detail), deadLetterReason: detail };
}

/** `message (error; error)` from PagerDuty's 400 body, on one line and cut; undefined if none. */
function pagerDutyRefusal(body: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const { message, errors } = parsed as { message?: unknown; errors?: unknown };
  const list = Array.isArray(errors) ? errors.filter((e) => typeof e === "string") : [];
  const head = typeof message === "string" ? message : "";
  const text = list.length === 0 ? head : `${head} (${list.join("; ")})`.trim();
  // One line of printable text: no control characters from outside reach a log or the page.
  const flat = text
    .replace(/\p{Cc}+/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  if (flat === "") return undefined;
  return truncatePlain(flat, MAX_REFUSAL_TEXT);
}

/** A transport error's code: timeouts apart, every failure to talk is a network failure. */
export function classifyErrorCode(code: string): SendFailure {
  const safe = /^[A-Z][A-Z0-9_]{0,63}$/.test(code) ? code : "network error";
  return TIMEOUT_CODES.has(code)
    ? failure("timeout", false, safe)
    : failure("network", false, safe);
}

/** The code of a thrown transport error (`ECONNREFUSED`, `UND_ERR_SOCKET`…), or `UNKNOWN`. */
export function errorCode(error: unknown): string {
  if (typeof error === "object" && error !== null && "code" in error) {
    const { code } = error;
    if (typeof code === "string" && code !== "") return code;
  }
  return "UNKNOWN";
}

/** Slack's error word (`invalid_payload`), or undefined when the body is not one. */
function slackErrorWord(text: string): string | undefined {
  return /^[a-z][a-z0-9_]{0,63}$/.test(text) ? text : undefined;
}

function retryAfter(headers: ReplyHeaders, options: ClassifyOptions): number | undefined {
  // An HTTP-date is read against the reply's own Date where it has one: our clock's skew
  // does not count.
  const reference = parseHttpDate(headers.date) ?? options.nowMs;
  const ms = parseRetryAfter(headers["retry-after"], reference);
  if (ms === undefined) return undefined;
  return Math.min(ms, options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS);
}

function failure(
  reason: FailureReason,
  permanent: boolean,
  detail: string,
  retryAfterMs?: number,
): SendFailure {
  return retryAfterMs === undefined
    ? { ok: false, reason, permanent, detail }
    : { ok: false, reason, permanent, retryAfterMs, detail };
}
