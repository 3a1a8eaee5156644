/**
 * The Slack sink: one Block Kit message per batch to an incoming webhook, whose URL is a
 * credential (it comes from the environment and never leaves this module). A platform
 * incident's updates are not posted (a message cannot be edited): a batch of nothing else is
 * delivered without a request.
 */
import type { Alert } from "../../store/index.js";
import type { SendResult, Sink } from "./sink.js";
import { PACKAGE } from "../../version.js";
import { abortedResult, closedResult, Delivery } from "./delivery.js";
import { checkCommonOptions, parseTargetUrl, type CommonSinkOptions } from "./options.js";
import { paceKey, waitForSlot } from "./pacer.js";
import { createRedactor, urlSecrets } from "../../config/index.js";
import { renderSlackMessage, SLACK_LIMITS, slackAlerts } from "./slack-message.js";

/** Slack allows one message per second per incoming webhook. */
export const SLACK_MIN_INTERVAL_MS = 1000;
export const SLACK_DEFAULT_MAX_BATCH = 50;

/** `maxBatch`: alerts per message, the first 20 shown, the rest counted (default 50). */
export interface SlackSinkOptions extends CommonSinkOptions {
  /** The incoming-webhook URL (a secret). */
  readonly webhookUrl: string;
}

export function createSlackSink(options: SlackSinkOptions): Sink {
  const checked = checkCommonOptions(options, SLACK_DEFAULT_MAX_BATCH);
  const { name, maxBatch } = checked;
  const url = parseTargetUrl(name, "webhookUrl", options.webhookUrl);
  const delivery = new Delivery({
    ...checked.transport,
    url,
    flavour: "slack",
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
      // The updates of a platform incident are not posted: a message cannot be edited.
      const told = slackAlerts(alerts);
      if (told.length === 0) return { ok: true };
      if (!(await waitForSlot(pace, SLACK_MIN_INTERVAL_MS, signal))) return abortedResult();
      const message = renderSlackMessage(told, { maxItems: SLACK_LIMITS.maxItems });
      return delivery.post(headers, JSON.stringify(message), signal);
    },
    close: () => delivery.close(),
  };
}
