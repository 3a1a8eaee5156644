/**
 * Builds the sinks from the configuration, each with the delivery policy its lane applies.
 */
import type { ResolvedSink } from "../config/index.js";
import type { Sink } from "./sinks/sink.js";
import type { SinkPolicy } from "./pipeline/delivery-plan.js";
import {
  createAlertmanagerSink,
  createPagerDutySink,
  createSlackSink,
  createWebhookSink,
} from "./sinks/index.js";

/** What the sinks take from the rest of the configuration. */
export interface SinkSettings {
  /** `alerts.statusPageUrl`: linked from the alerts that carry links (PagerDuty). */
  readonly statusPageUrl?: string | undefined;
}

/** The sinks, each with the policy the notifier applies to it. */
export function createSinks(
  sinks: readonly ResolvedSink[],
  settings: SinkSettings = {},
): { sink: Sink; policy: SinkPolicy }[] {
  return sinks.map((resolved) => {
    const s = resolved.config;
    const sink = createSink(resolved, settings);
    return {
      sink,
      policy: {
        name: s.name,
        groupWindowMs: s.groupWindow * 1000,
        maxAgeMs: s.maxAge * 1000,
        maxBatch: sink.maxBatch,
      },
    };
  });
}

function createSink(resolved: ResolvedSink, settings: SinkSettings): Sink {
  const s = resolved.config;
  const common = {
    name: s.name,
    timeoutMs: Math.ceil(s.timeout * 1000),
    ...(s.maxBatch === undefined ? {} : { maxBatch: s.maxBatch }),
  };
  switch (resolved.kind) {
    case "slack":
      return createSlackSink({ ...common, webhookUrl: resolved.url });
    case "webhook":
      return createWebhookSink({
        ...common,
        url: resolved.url,
        headers: resolved.config.headers,
        ...(resolved.secret === undefined ? {} : { secret: resolved.secret }),
      });
    case "pagerduty":
      return createPagerDutySink({
        ...common,
        url: resolved.config.url,
        routingKey: resolved.routingKey,
        severities: resolved.config.severity,
        statusPageUrl: settings.statusPageUrl,
      });
    case "alertmanager": {
      const am = resolved.config;
      return createAlertmanagerSink({
        ...common,
        urls: resolved.urls,
        auth: resolved.auth,
        firingForMs: am.failedFiringFor * 1000,
        payload: {
          severity: am.severity,
          staticLabels: am.labels,
          runbookUrls: am.runbookUrls,
          generatorUrl: settings.statusPageUrl,
          resendIntervalMs: Math.ceil(am.resendInterval * 1000),
        },
      });
    }
  }
}
