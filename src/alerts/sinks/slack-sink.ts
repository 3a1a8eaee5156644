/**
 * The Slack sink: one Block Kit message per batch to an incoming webhook, whose URL is a
 * credential (it comes from the environment and never leaves this module).
 */
import type { Dispatcher } from "undici";
import type { Alert } from "../../store/index.js";
import type { SendResult, Sink } from "../alert.js";
import { PACKAGE } from "../../version.js";
import { abortedResult, closedResult, Delivery } from "./delivery.js";
import { checkName, checkPositiveInteger, parseTargetUrl } from "./options.js";
import { paceKey, waitForSlot } from "./pacer.js";
import { createRedactor, urlSecrets } from "./redact.js";
import { renderSlackMessage, SLACK_LIMITS } from "./slack-message.js";

/** Slack allows one message per second per incoming webhook. */
export const SLACK_MIN_INTERVAL_MS = 1000;
export const SLACK_DEFAULT_MAX_BATCH = 50;

export interface SlackSinkOptions {
  readonly name: string;
  /** The incoming-webhook URL (a secret). */
  readonly webhookUrl: string;
  /** Deadline of one attempt (connect, send, answer). */
  readonly timeoutMs: number;
  /** Alerts per message: the first 20 are shown, the rest counted. Default 50. */
  readonly maxBatch?: number | undefined;
  /** A dispatcher to use instead of the sink's own keep-alive agent (not closed by the sink). */
  readonly dispatcher?: Dispatcher | undefined;
  /** Wall clock, for an HTTP-date `Retry-After`. Default `Date.now`. */
  readonly now?: (() => number) | undefined;
  /** Longest `Retry-After` honoured. Default 10 minutes. */
  readonly maxRetryAfterMs?: number | undefined;
}

export function createSlackSink(options: SlackSinkOptions): Sink {
  const { name } = options;
  checkName(name);
  const url = parseTargetUrl(name, "webhookUrl", options.webhookUrl);
  const timeoutMs = checkPositiveInteger(name, "timeoutMs", options.timeoutMs);
  const maxBatch = checkPositiveInteger(
    name,
    "maxBatch",
    options.maxBatch ?? SLACK_DEFAULT_MAX_BATCH,
  );
  const delivery = new Delivery({
    url,
    flavour: "slack",
    timeoutMs,
    dispatcher: options.dispatcher,
    now: options.now ?? Date.now,
    maxRetryAfterMs: options.maxRetryAfterMs,
    redact: createRedactor([options.webhookUrl, ...urlSecrets(url)]),
  });
  const pace = paceKey("slack", url.href);
  const headers = {
    "content-type": "application/json; charset=utf-8",
    "user-agent": `${PACKAGE.name}/${PACKAGE.version}`,
  };

  return {
    name,
    kind: "slack",
    maxBatch,
    minIntervalMs: SLACK_MIN_INTERVAL_MS,
    async send(alerts: readonly Alert[], signal: AbortSignal): Promise<SendResult> {
      if (delivery.closed) return closedResult();
      if (alerts.length === 0) return { ok: true };
      if (!(await waitForSlot(pace, SLACK_MIN_INTERVAL_MS, signal))) return abortedResult();
      const message = renderSlackMessage(alerts, { maxItems: SLACK_LIMITS.maxItems });
      return delivery.post(headers, JSON.stringify(message), signal);
    },
    close: () => delivery.close(),
  };
}
