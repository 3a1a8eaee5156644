/**
 * The PagerDuty sink: PagerDuty's Events API v2 takes one event per request, so a batch of N alerts
 * is N requests (more when a recovery resolves several alerts), sent in order, and the batch
 * succeeds only if every one is accepted (202). The routing key is a credential: it comes from the
 * environment, travels only in the request bodies, and is removed from anything the sink hands
 * back.
 *
 * A batch that fails part-way is sent again whole by the notifier (at-least-once). The events
 * PagerDuty already accepted are remembered (by alert id, a bounded number), and not sent again
 * by this sink: a trigger sent again after the resolve that followed it would open a new
 * incident. What survives no restart is the memory: after a crash, or a reload that replaces
 * the sink, a batch is sent again whole. A trigger sent again lands on its open incident (same
 * `dedup_key`), a resolve sent again is dropped by PagerDuty; only a trigger whose resolve was
 * accepted before the crash opens an incident again, which its resolve, sent right after it,
 * closes.
 */
import type { Alert } from "../../store/index.js";
import type { SendResult, Sink } from "./sink.js";
import { PACKAGE } from "../../version.js";
import { closedResult, Delivery } from "./delivery.js";
import {
  checkCommonOptions,
  parseTargetUrl,
  SinkConfigError,
  type CommonSinkOptions,
} from "./options.js";
import { pagerDutyEvents, type PagerDutySeverities } from "./pagerduty-event.js";
import { createRedactor } from "../../config/index.js";

/**
 * One alert per batch by default: each alert is then acknowledged, retried or dead-lettered on
 * its own answer. The notifier's pace (a batch per tick, 4 a second) is above PagerDuty's own
 * limit (about 120 events a minute per routing key), so larger batches would not deliver faster.
 */
export const PAGERDUTY_DEFAULT_MAX_BATCH = 1;
/** Accepted events remembered per sink, so that a batch sent again skips them. */
export const PAGERDUTY_ACCEPTED_MEMORY = 10_000;

/** `maxBatch`: alerts (one request each) in one batch (default 1). */
export interface PagerDutySinkOptions extends CommonSinkOptions {
  /** The Events API v2 address (`https://events.pagerduty.com/v2/enqueue`). */
  readonly url: string;
  /** The integration's routing key (a secret). */
  readonly routingKey: string;
  /** The severity of each alert kind that triggers. */
  readonly severities: PagerDutySeverities;
  /** The exporter's status page as people reach it: linked from each incident. */
  readonly statusPageUrl?: string | undefined;
}

export function createPagerDutySink(options: PagerDutySinkOptions): Sink {
  const { routingKey, severities } = options;
  const checked = checkCommonOptions(options, PAGERDUTY_DEFAULT_MAX_BATCH);
  const { name, maxBatch } = checked;
  const url = parseTargetUrl(name, "url", options.url);
  if (!/^\S+$/.test(routingKey)) {
    throw new SinkConfigError(name, "routingKey is empty or holds blanks");
  }
  const statusPageUrl =
    options.statusPageUrl === undefined
      ? undefined
      : parseTargetUrl(name, "statusPageUrl", options.statusPageUrl).href;
  const delivery = new Delivery({
    ...checked.transport,
    url,
    flavour: "pagerduty",
    redact: createRedactor([routingKey]),
  });
  const headers = {
    "content-type": "application/json",
    "user-agent": `${PACKAGE.name}/${PACKAGE.version}`,
  };
  /** Ids of alerts whose event PagerDuty accepted, oldest first (bounded). */
  const accepted = new Set<string>();
  const remember = (id: string): void => {
    accepted.add(id);
    if (accepted.size > PAGERDUTY_ACCEPTED_MEMORY) {
      const oldest = accepted.values().next();
      if (oldest.done !== true) accepted.delete(oldest.value);
    }
  };

  return {
    name,
    kind: "pagerduty",
    maxBatch,
    minIntervalMs: 0,
    async send(alerts: readonly Alert[], signal: AbortSignal): Promise<SendResult> {
      for (const alert of alerts) {
        if (delivery.closed) return closedResult();
        if (accepted.has(alert.id)) continue;
        // A recovery resolves each alert it names, one event each (a resolve sent again is
        // harmless: PagerDuty drops one for a key with no open alert).
        for (const event of pagerDutyEvents(alert, { routingKey, severities, statusPageUrl })) {
          const result = await delivery.post(headers, JSON.stringify(event), signal);
          // The batch stops at its first failure: later events may depend on this one (a
          // resolve on its trigger), and the notifier sends the batch again or gives up on it.
          if (!result.ok) return result;
        }
        remember(alert.id);
      }
      return { ok: true };
    },
    close: () => delivery.close(),
  };
}
