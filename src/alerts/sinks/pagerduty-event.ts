/**
 * PagerDuty's Events API v2 wire format (docs/pagerduty.md): one event per alert. A failure, a
 * stuck operation or a retry triggers an alert keyed by the alert's stable id (`dedup_key`), so
 * that sending it again lands on the same open incident; a recovery resolves the key of the
 * alert it `resolves`, and those of the other alerts it names (`alsoResolves`). Pure: the sink adds the routing key's request and the socket.
 */
import type { PagerDutySeverity, PagerDutySinkConfig } from "../../config/index.js";
import { resolvedIds, type Alert } from "../../store/index.js";
import { PACKAGE } from "../../version.js";
import { nameBesideId, truncatePlain } from "./mrkdwn.js";
import { KIND_STYLE } from "./slack-message.js";
import { toWebhookAlert, type WebhookAlert } from "./webhook-payload.js";

/** The severity of each alert kind that triggers (a recovery resolves, it has none). */
export type PagerDutySeverities = Readonly<PagerDutySinkConfig["severity"]>;

/** PagerDuty's documented limits, and ours on what we put into an event. */
export const PAGERDUTY_LIMITS = {
  /** `payload.summary`, in characters (we count UTF-16 units, never fewer). */
  maxSummary: 1024,
  /** The operation's error text in `custom_details` (an event may not pass 512 KB). */
  maxErrorText: 8192,
} as const;

export interface PagerDutyLink {
  readonly href: string;
  readonly text: string;
}

export interface PagerDutyTrigger {
  readonly routing_key: string;
  readonly event_action: "trigger";
  readonly dedup_key: string;
  readonly payload: {
    readonly summary: string;
    readonly source: string;
    readonly severity: PagerDutySeverity;
    readonly timestamp: string;
    readonly component?: string;
    readonly group?: string;
    readonly class: string;
    readonly custom_details: WebhookAlert;
  };
  readonly links?: readonly PagerDutyLink[];
  readonly client: string;
  readonly client_url?: string;
}

export interface PagerDutyResolve {
  readonly routing_key: string;
  readonly event_action: "resolve";
  readonly dedup_key: string;
}

export type PagerDutyEvent = PagerDutyTrigger | PagerDutyResolve;

export interface PagerDutyEventOptions {
  readonly routingKey: string;
  readonly severities: PagerDutySeverities;
  /** The exporter's status page as people reach it (`alerts.statusPageUrl`), if configured. */
  readonly statusPageUrl?: string | undefined;
}

/**
 * The events for one alert: a trigger's one, or a recovery's resolve for each alert it resolves
 * (`resolves`, then `alsoResolves`).
 */
export function pagerDutyEvents(alert: Alert, options: PagerDutyEventOptions): PagerDutyEvent[] {
  if (alert.kind !== "operation_recovered") {
    const event = pagerDutyEvent(alert, options);
    return event === undefined ? [] : [event];
  }
  return resolvedIds(alert).map((dedup_key) => ({
    routing_key: options.routingKey,
    event_action: "resolve",
    dedup_key,
  }));
}

/**
 * The event for one alert; undefined for a recovery that names no alert to resolve (the rules
 * always name one: there is then nothing to tell PagerDuty).
 */
export function pagerDutyEvent(
  alert: Alert,
  options: PagerDutyEventOptions,
): PagerDutyEvent | undefined {
  const routing_key = options.routingKey;
  if (alert.kind === "operation_recovered") {
    if (alert.resolves === undefined) return undefined;
    return { routing_key, event_action: "resolve", dedup_key: alert.resolves };
  }
  const severity = options.severities[alert.kind];
  const details = toWebhookAlert(alert);
  const links: PagerDutyLink[] = [];
  if (alert.link !== undefined && isHttpUrl(alert.link)) {
    links.push({ href: alert.link, text: "Operation in the console" });
  }
  const statusPage = options.statusPageUrl;
  if (statusPage !== undefined) links.push({ href: statusPage, text: "pgcp-exporter status page" });
  const component = alert.endpointId ?? alert.branchId;
  return {
    routing_key,
    event_action: "trigger",
    dedup_key: alert.id,
    payload: {
      summary: pagerDutySummary(alert),
      source: alert.projectId,
      severity,
      timestamp: alert.detectedAt,
      ...(component === undefined ? {} : { component }),
      ...(alert.branchId === undefined ? {} : { group: alert.branchId }),
      class: alert.kind === "compute_advice" ? alert.kind : alert.action,
      custom_details: {
        ...details,
        error:
          details.error === null
            ? null
            : truncatePlain(details.error, PAGERDUTY_LIMITS.maxErrorText),
      },
    },
    ...(links.length === 0 ? {} : { links }),
    client: PACKAGE.name,
    ...(statusPage === undefined ? {} : { client_url: statusPage }),
  };
}

/**
 * One line for people: what happened, where, and the error, cut with an ellipsis to PagerDuty's
 * 1,024 characters. `Operation failed: apply_config (failed) in project Acme (p-1) on endpoint
 * ep-1: compute node unreachable` (a name beside its id once known).
 */
export function pagerDutySummary(alert: Alert): string {
  const where =
    alert.endpointId !== undefined
      ? ` on endpoint ${nameBesideId(alert.endpointName, alert.endpointId)}`
      : alert.branchId !== undefined
        ? ` on branch ${nameBesideId(alert.branchName, alert.branchId)}`
        : "";
  const what = alert.kind === "compute_advice" ? alert.status : `${alert.action} (${alert.status})`;
  const project = nameBesideId(alert.projectName, alert.projectId);
  const head = `${KIND_STYLE[alert.kind].title}: ${what} in project ${project}${where}`;
  const error = (alert.advice?.summary ?? alert.error)?.replace(/\s+/g, " ").trim();
  const text = error === undefined || error === "" ? head : `${head}: ${error}`;
  return truncatePlain(text, PAGERDUTY_LIMITS.maxSummary);
}

function isHttpUrl(value: string): boolean {
  return /^https?:\/\//i.test(value);
}
