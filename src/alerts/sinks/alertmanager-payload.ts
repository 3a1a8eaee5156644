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
 */
import { resolvedIds, type Alert, type AlertKind, type FiringAlert } from "../../store/index.js";

/** The alert kinds that fire in Alertmanager; a recovery ends one of them. */
export type FiringKind = Exclude<AlertKind, "operation_recovered">;

export const ALERT_NAMES: Readonly<Record<FiringKind, string>> = {
  operation_failed: "PgcpOperationFailed",
  operation_stuck: "PgcpOperationStuck",
  operation_retrying: "PgcpOperationRetrying",
  compute_advice: "PgcpLargerComputeAdvised",
};

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
 * What one delivery of `alerts` from the outbox posts: each firing alert as firing; each
 * recovery as the alerts it resolves (`resolves` and `alsoResolves`), ended at the recovery
 * (found among `alerts` or in the project's firing set; one the sink no longer knows posts
 * nothing, and Alertmanager resolves it by itself).
 */
export function deliveryPayload(
  alerts: readonly Alert[],
  firing: readonly FiringAlert[],
  options: AlertmanagerPayloadOptions,
  nowMs: number,
): PostableAlert[] {
  const out: PostableAlert[] = [];
  for (const alert of alerts) {
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
