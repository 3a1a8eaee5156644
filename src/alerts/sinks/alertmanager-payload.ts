/**
 * Alerts as Alertmanager's API v2 takes them (`POST /api/v2/alerts`: an array of postable
 * alerts, each `labels`, `annotations`, `startsAt`, `endsAt`, `generatorURL`). Pure functions.
 *
 * An Alertmanager knows an alert by its labels, so an alert's labels never change while it
 * fires: the recovery of an operation is sent as its failure (or stuck) alert again, with the
 * same labels and `endsAt` set to when it recovered, which Alertmanager shows as resolved. The
 * names of its project, branch and endpoint, which may become known only after the first
 * delivery, are annotations for that reason.
 * A firing alert is sent with `endsAt` four re-send intervals ahead, as Prometheus does: if
 * the exporter stops re-sending it, Alertmanager resolves it by itself then.
 *
 * A platform incident is one alert from its opening to its resolution: its labels are what
 * groups it (the action, the region, the normalised error), never the project that carries it,
 * its id or its state, so each update is the same alert with fresher annotations (the projects,
 * their count, the failures). Its resolution is that alert again with `endsAt` set to when it
 * was resolved. It starts when its first failure was detected.
 */
import { resolvedIds, type Alert, type AlertKind, type FiringAlert } from "../../store/index.js";
import {
  countOf,
  incidentHeadline,
  incidentOf,
  incidentProjectNames,
  incidentStateOf,
  regionText,
} from "./incident.js";
import { truncatePlain } from "./mrkdwn.js";

/** The alert kinds that fire in Alertmanager; a recovery ends one of them. */
export type FiringKind = Exclude<AlertKind, "operation_recovered">;

export const ALERT_NAMES: Readonly<Record<FiringKind, string>> = {
  operation_failed: "PgcpOperationFailed",
  operation_stuck: "PgcpOperationStuck",
  operation_retrying: "PgcpOperationRetrying",
  compute_advice: "PgcpLargerComputeAdvised",
  platform_incident: "PgcpPlatformIncident",
};

/** Longest `error_class` label: cut the same way every time, so the alert keeps its labels. */
export const MAX_ERROR_CLASS_LABEL = 1024;

export interface AlertmanagerPayloadOptions {
  /** The `severity` label, by kind. */
  readonly severity: Readonly<Record<FiringKind, string>>;
  /** Added to every alert's labels. */
  readonly staticLabels: Readonly<Record<string, string>>;
  /** The `runbook_url` annotation, by kind, when configured. */
  readonly runbookUrls: Readonly<Partial<Record<FiringKind, string | undefined>>>;
  /** Where a person sees the exporter's view of it (its status page), when known. */
  readonly generatorUrl: string | undefined;
  /** How often firing alerts are re-sent: a firing alert's `endsAt` is four of these ahead. */
  readonly resendIntervalMs: number;
}

export interface PostableAlert {
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly startsAt: string;
  readonly endsAt: string;
  readonly generatorURL?: string;
}

/** How long a firing alert stays firing in Alertmanager without being re-sent. */
export function firingHorizonMs(resendIntervalMs: number): number {
  return 4 * resendIntervalMs;
}

function isFiringKind(kind: AlertKind): kind is FiringKind {
  return kind !== "operation_recovered";
}

/**
 * The postable alert for a firing `alert` at `nowMs`; with `endedAtMs`, the same alert resolved
 * at that time.
 */
export function postableAlert(
  alert: Alert & { readonly kind: FiringKind },
  options: AlertmanagerPayloadOptions,
  nowMs: number,
  endedAtMs?: number,
): PostableAlert {
  if (alert.kind === "platform_incident") return incidentAlert(alert, options, nowMs, endedAtMs);
  const labels: Record<string, string> = { ...options.staticLabels };
  labels.alertname = ALERT_NAMES[alert.kind];
  labels.project_id = alert.projectId;
  if (alert.branchId !== undefined) labels.branch_id = alert.branchId;
  if (alert.endpointId !== undefined) labels.endpoint_id = alert.endpointId;
  // A compute's advice is about no operation: it has neither action nor operation id.
  if (alert.action !== "") labels.action = alert.action;
  labels.status = alert.status;
  if (alert.operationId !== "") labels.operation_id = alert.operationId;
  labels.severity = options.severity[alert.kind];

  const annotations: Record<string, string> = {
    summary: summaryOf(alert),
    description: descriptionOf(alert),
  };
  // The names beside the ids, once known. Annotations, not labels: Alertmanager knows an alert
  // by its labels, so a name learned after the first delivery must not make it another alert.
  if (alert.projectName !== undefined) annotations.project_name = alert.projectName;
  if (alert.branchName !== undefined) annotations.branch_name = alert.branchName;
  if (alert.endpointName !== undefined) annotations.endpoint_name = alert.endpointName;
  if (alert.error !== undefined) annotations.error = alert.error;
  if (alert.link !== undefined) annotations.link = alert.link;
  const runbook = options.runbookUrls[alert.kind];
  if (runbook !== undefined) annotations.runbook_url = runbook;

  const startsAtMs = Date.parse(
    alert.kind === "operation_failed" ? alert.updatedAt : alert.detectedAt,
  );
  const endsAtMs = endedAtMs ?? nowMs + firingHorizonMs(options.resendIntervalMs);
  return {
    labels,
    annotations,
    startsAt: new Date(startsAtMs).toISOString(),
    // Never before the start: Alertmanager refuses such an alert.
    endsAt: new Date(Math.max(endsAtMs, startsAtMs)).toISOString(),
    ...(options.generatorUrl === undefined ? {} : { generatorURL: options.generatorUrl }),
  };
}

/**
 * A platform incident's alert: labelled by what groups it, annotated with where it stands;
 * firing until `endedAtMs`, or ended when it was resolved.
 */
function incidentAlert(
  alert: Alert,
  options: AlertmanagerPayloadOptions,
  nowMs: number,
  endedAtMs?: number,
): PostableAlert {
  const startsAtMs = Date.parse(alert.createdAt);
  const resolvedAtMs =
    incidentStateOf(alert) === "resolved" ? Date.parse(alert.detectedAt) : undefined;
  const endsAtMs = endedAtMs ?? resolvedAtMs ?? nowMs + firingHorizonMs(options.resendIntervalMs);
  return {
    labels: incidentLabels(alert, options),
    annotations: incidentAnnotations(alert, options),
    startsAt: new Date(startsAtMs).toISOString(),
    endsAt: new Date(Math.max(endsAtMs, startsAtMs)).toISOString(),
    ...(options.generatorUrl === undefined ? {} : { generatorURL: options.generatorUrl }),
  };
}

/** What groups an incident, the same in each of its alerts: no project, id nor state. */
function incidentLabels(alert: Alert, options: AlertmanagerPayloadOptions): Record<string, string> {
  const incident = incidentOf(alert);
  const labels: Record<string, string> = { ...options.staticLabels };
  labels.alertname = ALERT_NAMES.platform_incident;
  if (alert.action !== "") labels.action = alert.action;
  if (incident.regionId !== "") labels.region = incident.regionId;
  if (incident.errorClass !== "") {
    labels.error_class = truncatePlain(incident.errorClass, MAX_ERROR_CLASS_LABEL);
  }
  labels.severity = options.severity.platform_incident;
  return labels;
}

/** Where an incident stands: what changes from one of its alerts to the next. */
function incidentAnnotations(
  alert: Alert,
  options: AlertmanagerPayloadOptions,
): Record<string, string> {
  const incident = incidentOf(alert);
  const resolved = incidentStateOf(alert) === "resolved";
  const annotations: Record<string, string> = {
    summary: incidentHeadline(alert),
    description:
      `Failures of ${alert.action} in ${regionText(incident)} with one error across ` +
      `${countOf(incident.projectCount, "project")}: ${countOf(alert.failuresCount, "failure")} ` +
      `from ${alert.createdAt} to ${alert.updatedAt}` +
      (resolved ? `, resolved at ${alert.detectedAt}.` : "."),
    incident_id: incident.id,
    projects: incidentProjectNames(incident).join(", "),
    project_count: String(incident.projectCount),
    failures: String(alert.failuresCount),
  };
  if (alert.link !== undefined) annotations.link = alert.link;
  const runbook = options.runbookUrls.platform_incident;
  if (runbook !== undefined) annotations.runbook_url = runbook;
  return annotations;
}

/**
 * What one delivery of `alerts` from the outbox posts: each firing alert as firing; each
 * recovery as the alerts it resolves (`resolves` and `alsoResolves`), ended at the recovery
 * (found among `alerts` or in the project's firing set; one the sink no longer knows posts
 * nothing, and Alertmanager resolves it by itself); of a platform incident's alerts, the newest
 * in the batch (it says where the incident stands: the same alert, firing or resolved).
 */
export function deliveryPayload(
  alerts: readonly Alert[],
  firing: readonly FiringAlert[],
  options: AlertmanagerPayloadOptions,
  nowMs: number,
): PostableAlert[] {
  const out: PostableAlert[] = [];
  for (const [i, alert] of alerts.entries()) {
    if (alert.kind === "platform_incident") {
      if (!alerts.slice(i + 1).some((later) => sameIncident(later, alert))) {
        out.push(incidentAlert(alert, options, nowMs));
      }
      continue;
    }
    if (isFiringKind(alert.kind)) {
      const resolvedLater = alerts.find((a) => resolvedIds(a).includes(alert.id));
      const endedAtMs =
        resolvedLater === undefined ? undefined : Date.parse(resolvedLater.detectedAt);
      out.push(postableAlert({ ...alert, kind: alert.kind }, options, nowMs, endedAtMs));
      continue;
    }
    for (const id of resolvedIds(alert)) {
      if (alerts.some((a) => a.id === id)) continue;
      const original = firing.find((f) => f.alert.id === id);
      if (original === undefined || !isFiringKind(original.alert.kind)) continue;
      const endedAtMs = original.endedAtMs ?? Date.parse(alert.detectedAt);
      out.push(
        postableAlert({ ...original.alert, kind: original.alert.kind }, options, nowMs, endedAtMs),
      );
    }
  }
  return out;
}

/** What one re-send of a sink's firing set posts: firing ones firing, ended ones resolved. */
export function refreshPayload(
  firing: readonly FiringAlert[],
  options: AlertmanagerPayloadOptions,
  nowMs: number,
): PostableAlert[] {
  const out: PostableAlert[] = [];
  for (const f of firing) {
    if (!isFiringKind(f.alert.kind)) continue;
    out.push(postableAlert({ ...f.alert, kind: f.alert.kind }, options, nowMs, f.endedAtMs));
  }
  return out;
}

function sameIncident(a: Alert, b: Alert): boolean {
  return (
    a.kind === "platform_incident" &&
    b.kind === "platform_incident" &&
    incidentOf(a).id === incidentOf(b).id
  );
}

function summaryOf(alert: Alert): string {
  if (alert.kind === "compute_advice") {
    return `A larger compute is advised for endpoint ${alert.endpointId ?? ""} in project ${alert.projectId} (${alert.status})`;
  }
  const what =
    alert.kind === "operation_stuck"
      ? `is stuck in ${alert.status}`
      : alert.kind === "operation_retrying"
        ? `is being retried (failures: ${String(alert.failuresCount)})`
        : `ended ${alert.status}`;
  return `${alert.action} ${what} in project ${alert.projectId}`;
}

function descriptionOf(alert: Alert): string {
  if (alert.advice !== undefined) return alert.advice.summary;
  const parts = [
    `Operation ${alert.operationId} (${alert.action}) of project ${alert.projectId}`,
    alert.branchId === undefined ? undefined : `branch ${alert.branchId}`,
    alert.endpointId === undefined ? undefined : `endpoint ${alert.endpointId}`,
  ].filter((p) => p !== undefined);
  return (
    `${parts.join(", ")}: status ${alert.status} after ${String(Math.round(alert.durationSeconds))} s` +
    `, failures ${String(alert.failuresCount)}, created ${alert.createdAt}.`
  );
}
