/**
 * Builds the alert side of the daemon from the configuration: the rules that turn a poll's
 * transitions into outbox entries, and the sinks with their delivery policies.
 */
import type { Config, ResolvedSink } from "../config/index.js";
import type { OutboxEntry } from "../store/index.js";
import type { AlertContext } from "../sync/index.js";
import type { Transition } from "../sync/transitions.js";
import type { Sink } from "./alert.js";
import type { SinkPolicy } from "./delivery-plan.js";
import { alertsFrom, outboxEntries, type SinkRoute } from "./rules.js";
import {
  createPagerDutySink,
  createSlackSink,
  createWebhookSink,
  SinkConfigError,
} from "./sinks/index.js";

/**
 * The poll's hook: alerts for the transitions, routed to the sinks (the poll leaves out history
 * counted by a backfill). With no sink there is no hook, and nothing is kept.
 */
export function alertHook(
  config: Config,
  sinks: readonly ResolvedSink[],
): ((transitions: readonly Transition[], context: AlertContext) => OutboxEntry[]) | undefined {
  if (sinks.length === 0) return undefined;
  const routes: SinkRoute[] = sinks.map(({ config: s }) => ({
    name: s.name,
    drop: s.drop,
    match: s.match,
  }));
  const rules = {
    cancelledIsFailure: config.alerts.cancelledIsFailure,
    retrying: config.alerts.retrying,
    recovered: config.alerts.recovered,
    linkTemplate: config.alerts.link,
  };
  return (transitions, context) =>
    outboxEntries(alertsFrom(transitions, context.nowMs, rules), routes, context.nowMs, context);
}

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

function createSink(
  { config: s, url, secret, routingKey }: ResolvedSink,
  settings: SinkSettings,
): Sink {
  const common = {
    name: s.name,
    timeoutMs: Math.ceil(s.timeout * 1000),
    ...(s.maxBatch === undefined ? {} : { maxBatch: s.maxBatch }),
  };
  switch (s.kind) {
    case "slack":
      return createSlackSink({ ...common, webhookUrl: url });
    case "webhook":
      return createWebhookSink({
        ...common,
        url,
        headers: s.headers,
        ...(secret === undefined ? {} : { secret }),
      });
    case "pagerduty":
      if (routingKey === undefined) {
        throw new SinkConfigError(s.name, "no routing key (set routingKeyEnv's variable)");
      }
      return createPagerDutySink({
        ...common,
        url,
        routingKey,
        severities: s.severity,
        statusPageUrl: settings.statusPageUrl,
      });
  }
}
