/**
 * Builds the alert side of the daemon from the configuration: the rules that turn a poll's
 * transitions into outbox entries, and the sinks with their delivery policies.
 */
import type { Config, ResolvedSink } from "../config/index.js";
import type { AlertContext, NameLookup, RoutedAlerts } from "../sync/index.js";
import type { Transition } from "../sync/transitions.js";
import type { Alert, IncidentMark, OutboxEntry } from "../store/index.js";
import type { IncidentDesk } from "./pipeline/incident-desk.js";
import type { Sink } from "./sinks/sink.js";
import type { SinkPolicy } from "./pipeline/delivery-plan.js";
import { withNames } from "./rules/names.js";
import { alertsFrom, routeAlerts, type SinkRoute } from "./rules/rules.js";
import { isActive } from "./rules/silence-window.js";
import {
  createAlertmanagerSink,
  createPagerDutySink,
  createSlackSink,
  createWebhookSink,
} from "./sinks/index.js";

/**
 * The poll's hook: alerts for the transitions, routed to the sinks but for those that the
 * silences open at the poll's time cover (the poll leaves out history counted by a backfill).
 * Each alert carries the names `names` knows. With `incidents`, each failure is marked with the
 * platform incident it joins, if any, and held from the sinks that hold an incident's alerts.
 * With no sink there is no hook, and nothing is kept.
 */
export function alertHook(
  config: Config,
  sinks: readonly ResolvedSink[],
  names?: NameLookup,
  incidents?: IncidentDesk,
): ((transitions: readonly Transition[], context: AlertContext) => RoutedAlerts) | undefined {
  if (sinks.length === 0) return undefined;
  const routes = sinkRoutes(sinks);
  const holding = new Set(
    sinks.filter((s) => s.config.holdIncidentAlerts).map((s) => s.config.name),
  );
  const rules = {
    cancelledIsFailure: config.alerts.cancelledIsFailure,
    retrying: config.alerts.retrying,
    recovered: config.alerts.recovered,
    linkTemplate: config.alerts.link,
  };
  const desk = config.incidents.enabled ? incidents : undefined;
  return (transitions, context) => {
    const raised = alertsFrom(transitions, context.nowMs, rules);
    if (raised.length === 0) return { entries: [], silenced: [] };
    const alerts = raised.map((alert) => withNames(alert, names));
    const open = config.silences.filter((s) => isActive(s.window, context.nowMs));
    const routed = routeAlerts(alerts, routes, open, context.nowMs, context);
    if (desk === undefined) return routed;
    const marks = alerts.flatMap((alert) => {
      const mark = desk.consider(alert, context.regionId);
      return mark === undefined ? [] : [mark];
    });
    return { ...held(routed, marks, holding), incidentMarks: marks };
  };
}

/** The silence name the alerts an incident holds are recorded under. */
export const INCIDENT_HOLD = "platform_incident";

/**
 * The routing with the failures that joined an incident held from the sinks in `holding`:
 * recorded as silenced there (so that their recoveries are held too), not sent.
 */
function held(
  routed: RoutedAlerts,
  marks: readonly IncidentMark[],
  holding: ReadonlySet<string>,
): RoutedAlerts {
  const joined = new Set(marks.filter((m) => m.incidentId !== undefined).map((m) => m.alertId));
  if (joined.size === 0 || holding.size === 0) return routed;
  const entries: OutboxEntry[] = [];
  const silenced = [...routed.silenced];
  for (const entry of routed.entries) {
    if (!joined.has(entry.alert.id)) {
      entries.push(entry);
      continue;
    }
    const pending = entry.pending.filter((sink) => !holding.has(sink));
    for (const sink of entry.pending.filter((s) => holding.has(s))) {
      silenced.push({ alert: entry.alert, sink, silence: INCIDENT_HOLD });
    }
    if (pending.length > 0) entries.push({ ...entry, pending });
  }
  return { entries, silenced };
}

/**
 * Routes alerts raised outside a poll (`compute_advice`) as the poll's hook routes its own: to
 * the sinks whose rules take them, but for those the silences open at `nowMs` cover, with the
 * names `names` knows. With no sink there is no router.
 */
export function alertRouter(
  config: Config,
  sinks: readonly ResolvedSink[],
  names?: NameLookup,
): ((alerts: readonly Alert[], nowMs: number) => RoutedAlerts) | undefined {
  if (sinks.length === 0) return undefined;
  const routes = sinkRoutes(sinks);
  return (alerts, nowMs) => {
    const open = config.silences.filter((s) => isActive(s.window, nowMs));
    const named = alerts.map((alert) => withNames(alert, names));
    return routeAlerts(named, routes, open, nowMs);
  };
}

function sinkRoutes(sinks: readonly ResolvedSink[]): SinkRoute[] {
  return sinks.map(({ config: s }) => ({ name: s.name, drop: s.drop, match: s.match }));
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
