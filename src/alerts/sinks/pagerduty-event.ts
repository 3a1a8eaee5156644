/**
 * PagerDuty's Events API v2 wire format (docs/pagerduty.md): one event per alert. A failure, a
 * stuck operation or a retry triggers an alert keyed by the alert's stable id (`dedup_key`), so
 * that sending it again lands on the same open incident; a recovery resolves the key of the
 * alert it `resolves`, and those of the other alerts it names (`alsoResolves`). A platform
 * incident is keyed by the incident's id instead: its opening and each update trigger the same
 * key (an update lands on the open incident and pages no one again), and its resolution
 * resolves it. Pure: the sink adds the routing key's request and the socket.
 */
import { createHash } from "node:crypto";
import type { PagerDutySeverity, PagerDutySinkConfig } from "../../config/index.js";
import { resolvedIds, type Alert } from "../../store/index.js";
import { PACKAGE } from "../../version.js";
import { incidentHeadline, incidentOf, incidentStateOf } from "./incident.js";
import { nameBesideId, truncatePlain } from "./mrkdwn.js";
import { KIND_STYLE } from "./slack-message.js";
import {
  toWebhookAlert,
  toWebhookIncident,
  type WebhookAlert,
  type WebhookIncident,
} from "./webhook-payload.js";

/** The severity of each alert kind that triggers (a recovery resolves, it has none). */
export type PagerDutySeverities = Readonly<PagerDutySinkConfig["severity"]>;

/** PagerDuty's documented limits, and ours on what we put into an event. */
export const PAGERDUTY_LIMITS = {
  /** `payload.summary`, in characters (we count UTF-16 units, never fewer). */
  maxSummary: 1024,
  /** The operation's error text in `custom_details` (an event may not pass 512 KB). */
  maxErrorText: 8192,
  /** `dedup_key`, in characters. */
  maxDedupKey: 255,
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
    readonly custom_details: WebhookAlert | IncidentDetails;
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

/**
 * A platform incident's `custom_details`: the incident as the webhook sends it (its id, state,
 * region, normalised error, listed projects and their count), with the action, the failures,
 * the times and the alert's id; not the project that carries it, which means nothing to people.
 */
export type IncidentDetails = WebhookIncident & {
  readonly kind: "platform_incident";
  readonly action: string;
  readonly failures_count: number;
  readonly created_at: string;
  readonly updated_at: string;
  readonly detected_at: string;
  readonly alert_id: string;
  readonly link: string | null;
};

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
  if (alert.kind === "platform_incident") return incidentEvent(alert, options);
  const severity = options.severities[alert.kind];
  const details = toWebhookAlert(alert);
  const links = linksOf(alert, "Operation in the console", options.statusPageUrl);
  const statusPage = options.statusPageUrl;
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
 * A platform incident's event: a trigger while it is opened or updated, a resolve once resolved,
 * all keyed by the incident's id.
 */
function incidentEvent(alert: Alert, options: PagerDutyEventOptions): PagerDutyEvent {
  const routing_key = options.routingKey;
  const incident = incidentOf(alert);
  const dedup_key = incidentDedupKey(incident.id);
  if (incidentStateOf(alert) === "resolved") {
    return { routing_key, event_action: "resolve", dedup_key };
  }
  const links = linksOf(alert, "In the console", options.statusPageUrl);
  const statusPage = options.statusPageUrl;
  return {
    routing_key,
    event_action: "trigger",
    dedup_key,
    payload: {
      summary: pagerDutySummary(alert),
      source: incident.regionId === "" ? PACKAGE.name : incident.regionId,
      severity: options.severities.platform_incident,
      timestamp: alert.detectedAt,
      class: alert.action,
      custom_details: incidentDetails(alert),
    },
    ...(links.length === 0 ? {} : { links }),
    client: PACKAGE.name,
    ...(statusPage === undefined ? {} : { client_url: statusPage }),
  };
}

/**
 * The `dedup_key` of every event of one platform incident: `pgcp-incident-<id>`, or, for an id
 * too long for PagerDuty, `pgcp-incident-sha256-<hex of the id>`.
 */
export function incidentDedupKey(incidentId: string): string {
  const key = `pgcp-incident-${incidentId}`;
  if (key.length <= PAGERDUTY_LIMITS.maxDedupKey) return key;
  return `pgcp-incident-sha256-${createHash("sha256").update(incidentId).digest("hex")}`;
}

function incidentDetails(alert: Alert): IncidentDetails {
  const incident = toWebhookIncident(incidentOf(alert));
  return {
    kind: "platform_incident",
    ...incident,
    error_class: truncatePlain(incident.error_class, PAGERDUTY_LIMITS.maxErrorText),
    action: alert.action,
    failures_count: alert.failuresCount,
    created_at: alert.createdAt,
    updated_at: alert.updatedAt,
    detected_at: alert.detectedAt,
    alert_id: alert.id,
    link: alert.link ?? null,
  };
}

/**
 * One line for people: what happened, where, and the error, cut with an ellipsis to PagerDuty's
 * 1,024 characters. `Operation failed: apply_config (failed) in project Acme (p-1) on endpoint
 * ep-1: compute node unreachable` (a name beside its id once known). A platform incident:
 * `Platform incident: start_compute failing in aws-us-east-2 across 12 projects: safekeeper
 * quorum not reached`.
 */
export function pagerDutySummary(alert: Alert): string {
  if (alert.kind === "platform_incident") {
    return truncatePlain(
      `${KIND_STYLE.platform_incident.title}: ${incidentHeadline(alert)}`,
      PAGERDUTY_LIMITS.maxSummary,
    );
  }
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

/** The alert's console link (an http(s) one) as `text`, then the status page, when known. */
function linksOf(alert: Alert, text: string, statusPage: string | undefined): PagerDutyLink[] {
  const links: PagerDutyLink[] = [];
  if (alert.link !== undefined && isHttpUrl(alert.link)) links.push({ href: alert.link, text });
  if (statusPage !== undefined) links.push({ href: statusPage, text: "pgcp-exporter status page" });
  return links;
}

function isHttpUrl(value: string): boolean {
  return /^https?:\/\//i.test(value);
}
