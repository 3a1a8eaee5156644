/**
 * What every sink reads of a `platform_incident` alert: the incident itself, its projects as
 * people read them, and one line that says what fails where. Pure.
 *
 * The common fields of such an alert are the incident's: `operationId` is the incident's id,
 * `status` its state, `error` its normalised error; `projectId` is only the project whose state
 * carries the alert, so no sink presents it as the incident's project.
 */
import {
  INCIDENT_STATES,
  type Alert,
  type Incident,
  type IncidentState,
} from "../../store/index.js";
import { formatDuration, nameBesideId } from "./mrkdwn.js";

/**
 * The incident `alert` tells of: its `incident`, or, should it lack one, what the common
 * fields say (no region, no project listed).
 */
export function incidentOf(alert: Alert): Incident {
  if (alert.incident !== undefined) return alert.incident;
  return {
    id: alert.operationId,
    state: incidentState(alert.status),
    regionId: "",
    errorClass: alert.error ?? "",
    projects: [],
    projectCount: 0,
  };
}

/** Where the incident stands: its `incident.state`, else its `status` when that is a state. */
export function incidentStateOf(alert: Alert): IncidentState {
  return alert.incident?.state ?? incidentState(alert.status);
}

function incidentState(status: string): IncidentState {
  return (INCIDENT_STATES as readonly string[]).includes(status)
    ? (status as IncidentState)
    : "opened";
}

/** The region for people: its id, or words when it is unknown. */
export function regionText(incident: Incident): string {
  return incident.regionId === "" ? "an unknown region" : incident.regionId;
}

/** The listed projects, each its name beside its id (the id alone while unnamed). */
export function incidentProjectNames(incident: Incident): string[] {
  return incident.projects.map((p) => nameBesideId(p.name, p.id));
}

/**
 * One line for people: `start_compute failing in aws-us-east-2 across 12 projects: safekeeper
 * quorum not reached` (whitespace of the error flattened; no error, no colon).
 */
export function incidentHeadline(alert: Alert): string {
  const incident = incidentOf(alert);
  const head = `${alert.action} failing in ${regionText(incident)} across ${countOf(incident.projectCount, "project")}`;
  return withError(head, incident);
}

/**
 * The resolution in one line: `start_compute in aws-us-east-2 across 12 projects, lasted 14m 5s
 * (37 failures): safekeeper quorum not reached`; it lasted from its first failure to its latest
 * (`durationSeconds`).
 */
export function incidentResolvedLine(alert: Alert): string {
  const incident = incidentOf(alert);
  const head =
    `${alert.action} in ${regionText(incident)} across ${countOf(incident.projectCount, "project")}` +
    `, lasted ${formatDuration(alert.durationSeconds)} (${countOf(alert.failuresCount, "failure")})`;
  return withError(head, incident);
}

export function countOf(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** `head: error`, the error on one line; `head` alone without an error. */
function withError(head: string, incident: Incident): string {
  const error = incident.errorClass.replace(/\s+/g, " ").trim();
  return error === "" ? head : `${head}: ${error}`;
}
