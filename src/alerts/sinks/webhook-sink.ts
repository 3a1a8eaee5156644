/**
 * The generic webhook sink: one signed JSON POST per batch (schema in docs/webhook.md). The URL,
 * the signing secret and the custom header values come from the environment and never leave
 * this module.
 */
import type { Alert } from "../../store/index.js";
import type { SendResult, Sink } from "./sink.js";
import { closedResult, Delivery } from "./delivery.js";
import {
  checkCommonOptions,
  checkCustomHeaders,
  parseTargetUrl,
  type CommonSinkOptions,
  SinkConfigError,
} from "./options.js";
import { createRedactor, urlSecrets } from "../../config/index.js";
import { RESERVED_HEADER_PREFIX, RESERVED_HEADERS, webhookRequest } from "./webhook-payload.js";

export const WEBHOOK_DEFAULT_MAX_BATCH = 100;

/** `maxBatch`: alerts in one request (default 100). */
export interface WebhookSinkOptions extends CommonSinkOptions {
  readonly url: string;
  /** HMAC-SHA256 key for `X-Pgcp-Signature`; without it requests are not signed. */
  readonly secret?: string | undefined;
  /** Extra headers (e.g. `Authorization`); they cannot replace the sink's own. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

export function createWebhookSink(options: WebhookSinkOptions): Sink {
  const { secret } = options;
  const checked = checkCommonOptions(options, WEBHOOK_DEFAULT_MAX_BATCH);
  const { name, maxBatch, now } = checked;
  const url = parseTargetUrl(name, "url", options.url);
  if (secret?.length === 0) {
    throw new SinkConfigError(name, "secret is empty (leave it out to send unsigned requests)");
  }
  const headers = checkCustomHeaders(
    name,
    options.headers ?? {},
    RESERVED_HEADERS,
    RESERVED_HEADER_PREFIX,
  );
  const delivery = new Delivery({
    ...checked.transport,
    url,
    flavour: "webhook",
    redact: createRedactor([
      options.url,
      ...urlSecrets(url),
      ...(secret === undefined ? [] : [secret]),
      ...Object.values(headers),
    ]),
  });

  return {
    name,
    kind: "webhook",
    maxBatch,
    minIntervalMs: 0,
    async send(alerts: readonly Alert[], signal: AbortSignal): Promise<SendResult> {
      if (delivery.closed) return closedResult();
      if (alerts.length === 0) return { ok: true };
      const request = webhookRequest(alerts, { nowMs: now(), secret, headers });
      return delivery.post(request.headers, request.body, signal);
    },
    close: () => delivery.close(),
  };
}
