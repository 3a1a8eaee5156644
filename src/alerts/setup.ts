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
import { createSlackSink, createWebhookSink } from "./sinks/index.js";

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

/** The sinks, each with the policy the notifier applies to it. */
export function createSinks(sinks: readonly ResolvedSink[]): { sink: Sink; policy: SinkPolicy }[] {
  return sinks.map(({ config: s, url, secret }) => {
    const common = {
      name: s.name,
      timeoutMs: Math.ceil(s.timeout * 1000),
      ...(s.maxBatch === undefined ? {} : { maxBatch: s.maxBatch }),
    };
    const sink =
      s.kind === "slack"
        ? createSlackSink({ ...common, webhookUrl: url })
        : createWebhookSink({
            ...common,
            url,
            headers: s.headers,
            ...(secret === undefined ? {} : { secret }),
          });
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
