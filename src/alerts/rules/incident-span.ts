/**
 * A platform incident as the span the OpenTelemetry export sends of it (docs/opentelemetry.md):
 * from its first failure to its resolution, linked to the operation attempts whose failures formed
 * it or joined it. Pure: the incident desk queues the span in the commit that records the
 * resolution, so that it is queued once, with it.
 *
 * A link names an attempt as the operation's own span does (`sync/attempts.ts`), so it points at
 * that span: the failure's alert tells of the operation and the status and failures count it was
 * read with, and its mark keeps the attempt they give.
 */
import {
  MAX_INCIDENT_SPAN_LINKS,
  type Alert,
  type IncidentMark,
  type IncidentSpan,
} from "../../store/index.js";
import { attemptOf } from "../../sync/index.js";
import type { OpenIncident } from "./incidents.js";

/** An operation attempt an incident span links to. */
export type IncidentSpanLink = IncidentSpan["links"][number];

/** The attempt a failure alert tells of; none for an alert of no operation. */
export function failedAttempt(alert: Alert): IncidentSpanLink | undefined {
  if (alert.operationId === "") return undefined;
  return {
    operationId: alert.operationId,
    attempt: attemptOf(alert.status, alert.failuresCount),
  };
}

/**
 * The links of `marks`, taken in the order given (the order the failures were detected): each
 * attempt once, the first `MAX_INCIDENT_SPAN_LINKS`. Marks committed before marks kept their
 * attempt give none.
 */
export function spanLinks(marks: Iterable<IncidentMark>): IncidentSpanLink[] {
  const links: IncidentSpanLink[] = [];
  const seen = new Set<string>();
  for (const mark of marks) {
    if (links.length >= MAX_INCIDENT_SPAN_LINKS) break;
    if (mark.operationId === undefined || mark.attempt === undefined) continue;
    const key = `${mark.operationId}/${String(mark.attempt)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    links.push({ operationId: mark.operationId, attempt: mark.attempt });
  }
  return links;
}

/**
 * The span of `incident`, resolved at `resolvedAtMs`: what the sinks are told of it as it
 * resolves (its group, failures and projects), from its first failure.
 */
export function incidentSpan(incident: OpenIncident, resolvedAtMs: number): IncidentSpan {
  return {
    kind: "incident",
    incidentId: incident.id,
    action: incident.key.action,
    regionId: incident.key.regionId,
    errorClass: incident.key.errorClass,
    failures: incident.failures,
    projectCount: incident.projectCount,
    startMs: incident.firstAtMs,
    endMs: resolvedAtMs,
    links: [...incident.links],
  };
}
