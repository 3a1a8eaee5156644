/**
 * Checks on a sink's options, made once when the sink is created. The errors name the sink and
 * the option, never a URL, a secret or a header value: those come from the environment.
 */

import type { Dispatcher } from "undici";
import { systemClock } from "../../clock.js";

/** What every sink's options have. */
export interface CommonSinkOptions {
  readonly name: string;
  /** Deadline of one attempt (connect, send, answer). */
  readonly timeoutMs: number;
  /** Most alerts in one batch (each sink has its default). */
  readonly maxBatch?: number | undefined;
  /** A dispatcher to use instead of the sink's own keep-alive agent (not closed by the sink). */
  readonly dispatcher?: Dispatcher | undefined;
  /** Wall clock, for timestamps the sink sends and an HTTP-date `Retry-After`. */
  readonly now?: (() => number) | undefined;
  /** Longest `Retry-After` honoured. Default 10 minutes. */
  readonly maxRetryAfterMs?: number | undefined;
}

/** The common options checked, with their defaults. */
export interface CheckedSinkOptions {
  readonly name: string;
  readonly maxBatch: number;
  readonly now: () => number;
  /** What a sink's `Delivery` takes of them (beside its URL, reply flavour and redactor). */
  readonly transport: {
    readonly timeoutMs: number;
    readonly dispatcher: Dispatcher | undefined;
    readonly now: () => number;
    readonly maxRetryAfterMs: number | undefined;
  };
}

/** Checks the options every sink has; `defaultMaxBatch` when `maxBatch` is not given. */
export function checkCommonOptions(
  options: CommonSinkOptions,
  defaultMaxBatch: number,
): CheckedSinkOptions {
  const { name } = options;
  checkName(name);
  const timeoutMs = checkPositiveInteger(name, "timeoutMs", options.timeoutMs);
  const now = options.now ?? systemClock.wall;
  return {
    name,
    maxBatch: checkPositiveInteger(name, "maxBatch", options.maxBatch ?? defaultMaxBatch),
    now,
    transport: {
      timeoutMs,
      dispatcher: options.dispatcher,
      now,
      maxRetryAfterMs: options.maxRetryAfterMs,
    },
  };
}

/** A sink's options are unusable. */
export class SinkConfigError extends Error {
  constructor(sinkName: string, problem: string) {
    super(`alert sink ${JSON.stringify(sinkName)}: ${problem}`);
    this.name = "SinkConfigError";
  }
}

export function checkName(name: string): void {
  if (name.trim() === "") throw new SinkConfigError(name, "the name must not be empty");
}

/** An absolute http(s) URL without credentials; the message never repeats the URL. */
export function parseTargetUrl(sinkName: string, option: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new SinkConfigError(sinkName, `${option} is not a valid absolute URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new SinkConfigError(sinkName, `${option} must be an http or https URL`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new SinkConfigError(
      sinkName,
      `${option} must not carry credentials (use a custom Authorization header)`,
    );
  }
  if (url.hash !== "") url.hash = "";
  return url;
}

export function checkPositiveInteger(sinkName: string, option: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new SinkConfigError(sinkName, `${option} must be a positive integer`);
  }
  return value;
}

/** RFC 9110 token characters. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Visible characters, spaces and tabs; no CR, LF or NUL. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Custom headers, checked and with lower-case names. A header the sink sets itself, or one
 * that would change how the request is framed or routed, cannot be configured.
 */
export function checkCustomHeaders(
  sinkName: string,
  headers: Readonly<Record<string, string>>,
  reserved: ReadonlySet<string>,
  reservedPrefix: string,
): Record<string, string> {
  const checked: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name)) {
      throw new SinkConfigError(sinkName, `custom header name ${JSON.stringify(name)} is invalid`);
    }
    if (reserved.has(lower) || lower.startsWith(reservedPrefix)) {
      throw new SinkConfigError(
        sinkName,
        `custom header ${JSON.stringify(name)} is set by the sink and cannot be configured`,
      );
    }
    if (!HEADER_VALUE.test(value)) {
      throw new SinkConfigError(
        sinkName,
        `the value of custom header ${JSON.stringify(name)} is invalid`,
      );
    }
    if (Object.hasOwn(checked, lower)) {
      throw new SinkConfigError(sinkName, `custom header ${JSON.stringify(name)} is given twice`);
    }
    checked[lower] = value;
  }
  return checked;
}
