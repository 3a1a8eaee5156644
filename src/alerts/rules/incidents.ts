/**
 * Platform incidents, as pure rules: failures of one action, in one region, whose error texts
 * are the same once ids, numbers, quoted values and hex are taken out (`errorClass`), across at
 * least `minProjects` projects within `window`, are one incident. A later failure of the same
 * kind joins it; it resolves once none has joined for a window.
 *
 * Everything is derived from what the projects' states keep (`store/incident-record.ts`): each
 * failure's mark, committed with the failure's alert, and the incidents a project carries. So
 * whatever a crash interrupts, the next pass derives the same incidents and finishes telling the
 * sinks of them (`incidentWork`).
 */
import { createHash } from "node:crypto";
import {
  MAX_INCIDENT_MEMBERS,
  MAX_INCIDENT_PROJECTS_LISTED,
  type Alert,
  type CarriedIncident,
  type IncidentKey,
  type IncidentMark,
  type IncidentRecord,
  type IncidentState,
} from "../../store/index.js";
import { spanLinks, type IncidentSpanLink } from "./incident-span.js";

export interface IncidentSettings {
  /** Failures this close together group; an incident nothing joins for this long resolves. */
  readonly windowMs: number;
  /** Projects whose failures make an incident. */
  readonly minProjects: number;
}

/** The settings as the configuration gives them. */
export function incidentSettings(config: {
  readonly incidents: { readonly window: number; readonly minProjects: number };
}): IncidentSettings {
  return { windowMs: config.incidents.window * 1000, minProjects: config.incidents.minProjects };
}

/** Most characters of an error class (an Alertmanager label, a Slack line). */
export const MAX_ERROR_CLASS_LENGTH = 200;

/**
 * The error text with what differs between projects taken out: quoted values, UUIDs, ids (words
 * joined by `-` or `_` with a digit in them, as `ep-cool-darkness-123456`), hex of six or more
 * digits, and numbers, each replaced by a placeholder; spaces collapsed.
 */
export function errorClass(error: string): string {
  return error
    .replace(/"[^"]*"|'[^']*'|`[^`]*`/g, "<q>")
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "<id>")
    .replace(/\b(?=[a-z0-9_-]*\d)[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+\b/gi, "<id>")
    .replace(/\b(?:0x)?(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6,}\b/gi, "<hex>")
    .replace(/\d+(?:\.\d+)?/g, "<n>")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, MAX_ERROR_CLASS_LENGTH);
}

/** The group a failure alert belongs to, if it can join one (a failure whose region is known). */
export function incidentKeyOf(alert: Alert, regionId: string | undefined): IncidentKey | undefined {
  if (alert.kind !== "operation_failed" || regionId === undefined || alert.action === "") {
    return undefined;
  }
  return { action: alert.action, regionId, errorClass: errorClass(alert.error ?? "") };
}

function keyString(key: IncidentKey): string {
  return JSON.stringify([key.action, key.regionId, key.errorClass]);
}

function hash(parts: readonly unknown[], length: number): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, length);
}

/** An incident's id: from its group and the failure that formed it. */
export function incidentId(key: IncidentKey, founderAlertId: string): string {
  return `inc-${hash([key.action, key.regionId, key.errorClass, founderAlertId], 16)}`;
}

/** A project's incident record, as the board is derived from. */
export interface ProjectIncidents {
  readonly projectId: string;
  readonly record: IncidentRecord | undefined;
}

/** An incident not yet resolved, as derived from the projects' records. */
export interface OpenIncident {
  readonly id: string;
  readonly key: IncidentKey;
  readonly firstAtMs: number;
  /** When the latest failure joined it. */
  readonly lastAtMs: number;
  readonly failures: number;
  /** Its projects in the order they joined (the first `MAX_INCIDENT_MEMBERS`). */
  readonly projects: readonly string[];
  readonly projectCount: number;
  /** The project whose failure formed it. */
  readonly founder: string;
  /**
   * The operation attempts whose failures formed it and joined it, in the order they were
   * detected (the first `MAX_INCIDENT_SPAN_LINKS`): its span's links.
   */
  readonly links: readonly IncidentSpanLink[];
  /** The project that carries it, with what the sinks were last told; none yet. */
  readonly carried: { readonly projectId: string; readonly incident: CarriedIncident } | undefined;
}

/** The incidents open now and the failures that stand alone, derived from every record. */
export interface IncidentBoard {
  readonly open: readonly OpenIncident[];
  /** By group: the open incident a new failure joins (the one joined last). */
  readonly openByKey: ReadonlyMap<string, OpenIncident>;
  /** By group: failures that joined no incident (project, time, alert). */
  readonly alone: ReadonlyMap<string, readonly Placed[]>;
  /** Marks by alert id: a failure decided once is decided the same way again. */
  readonly byAlert: ReadonlyMap<string, IncidentMark>;
}

/** A failure's mark, with the project it was raised in. */
export type Placed = IncidentMark & { readonly projectId: string };

/** Derives the board from the projects' records. */
export function incidentBoard(
  projects: readonly ProjectIncidents[],
  settings: IncidentSettings,
): IncidentBoard {
  const resolved = new Set<string>();
  const joined = new Map<string, Placed[]>();
  const alone = new Map<string, Placed[]>();
  const carried = new Map<string, { projectId: string; incident: CarriedIncident }>();
  const byAlert = new Map<string, IncidentMark>();
  for (const { projectId, record } of projects) {
    if (record === undefined) continue;
    for (const r of record.resolved) resolved.add(r.id);
    for (const mark of record.marks) {
      byAlert.set(mark.alertId, mark);
      const placed = { ...mark, projectId };
      if (mark.incidentId === undefined) push(alone, keyString(mark), placed);
      else push(joined, mark.incidentId, placed);
    }
    for (const incident of record.carried) {
      const seen = carried.get(incident.id);
      if (seen === undefined || seen.incident.lastAtMs < incident.lastAtMs) {
        carried.set(incident.id, { projectId, incident });
      }
    }
  }
  const open: OpenIncident[] = [];
  for (const id of new Set([...joined.keys(), ...carried.keys()])) {
    if (resolved.has(id)) continue;
    const incident = derive(id, joined.get(id) ?? [], carried.get(id), alone, settings);
    if (incident !== undefined) open.push(incident);
  }
  open.sort((a, b) => a.firstAtMs - b.firstAtMs);
  // The one a failure joins: the latest joined (an earlier one of its group may be awaiting
  // its resolution).
  const openByKey = new Map<string, OpenIncident>();
  for (const incident of open) {
    const key = keyString(incident.key);
    const seen = openByKey.get(key);
    if (seen === undefined || seen.lastAtMs <= incident.lastAtMs) openByKey.set(key, incident);
  }
  return { open, openByKey, alone, byAlert };
}

function derive(
  id: string,
  marks: readonly Placed[],
  carried: { projectId: string; incident: CarriedIncident } | undefined,
  alone: ReadonlyMap<string, readonly Placed[]>,
  settings: IncidentSettings,
): OpenIncident | undefined {
  const sorted = [...marks].sort((a, b) => a.atMs - b.atMs);
  const founding = sorted[0];
  const key: IncidentKey | undefined = founding ?? carried?.incident;
  if (key === undefined) return undefined;
  // The failures that formed it with its founder: those of its group within the window before.
  const formedWith =
    founding === undefined
      ? []
      : (alone.get(keyString(key)) ?? []).filter(
          (m) => m.atMs <= founding.atMs && founding.atMs - m.atMs < settings.windowMs,
        );
  const members = [...formedWith, ...sorted].sort((a, b) => a.atMs - b.atMs);
  const projects = [
    ...new Set([...(carried?.incident.projects ?? []), ...members.map((m) => m.projectId)]),
  ];
  const failures = Math.max(carried?.incident.failures ?? 0, members.length);
  // A loop, not a spread: an incident across a fleet may have more marks than a call has room
  // for arguments.
  let firstAtMs = carried?.incident.firstAtMs ?? Infinity;
  let lastAtMs = carried?.incident.lastAtMs ?? -Infinity;
  for (const m of members) {
    firstAtMs = Math.min(firstAtMs, m.atMs);
    lastAtMs = Math.max(lastAtMs, m.atMs);
  }
  return {
    id,
    key: { action: key.action, regionId: key.regionId, errorClass: key.errorClass },
    firstAtMs,
    lastAtMs,
    failures,
    projects: projects.slice(0, MAX_INCIDENT_MEMBERS),
    projectCount: Math.max(carried?.incident.projectCount ?? 0, projects.length),
    founder: founding?.projectId ?? carried?.projectId ?? "",
    links: spanLinks(members),
    carried,
  };
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

/** What deciding a failure reads: the board, or the board and the failures decided since. */
export interface FailureLookup {
  /** The mark of a failure decided before. */
  decided(alertId: string): IncidentMark | undefined;
  /** The open incident of a group that a failure would join: the one joined last. */
  openOf(key: IncidentKey): { readonly id: string; readonly lastAtMs: number } | undefined;
  /** The failures of a group that joined no incident. */
  aloneOf(key: IncidentKey): readonly Placed[];
}

/** The board as a failure's decision reads it. */
export function boardLookup(board: IncidentBoard): FailureLookup {
  return {
    decided: (alertId) => board.byAlert.get(alertId),
    openOf: (key) => board.openByKey.get(keyString(key)),
    aloneOf: (key) => board.alone.get(keyString(key)) ?? [],
  };
}

/**
 * `lookup` with the failures decided since it was derived (`recent`, each with its project):
 * those of an incident extend it (or are the incident they formed), the others stand alone.
 */
export function withRecent(lookup: FailureLookup, recent: readonly Placed[]): FailureLookup {
  if (recent.length === 0) return lookup;
  const ofKey = (key: IncidentKey) => {
    const k = keyString(key);
    return recent.filter((m) => keyString(m) === k);
  };
  return {
    decided: (alertId) => recent.find((m) => m.alertId === alertId) ?? lookup.decided(alertId),
    openOf: (key) => {
      const lastAt = new Map<string, number>();
      const base = lookup.openOf(key);
      if (base !== undefined) lastAt.set(base.id, base.lastAtMs);
      for (const m of ofKey(key)) {
        if (m.incidentId === undefined) continue;
        lastAt.set(m.incidentId, Math.max(lastAt.get(m.incidentId) ?? -Infinity, m.atMs));
      }
      let latest: { id: string; lastAtMs: number } | undefined;
      for (const [id, lastAtMs] of lastAt) {
        if (latest === undefined || lastAtMs >= latest.lastAtMs) latest = { id, lastAtMs };
      }
      return latest;
    },
    aloneOf: (key) => [
      ...lookup.aloneOf(key),
      ...ofKey(key).filter((m) => m.incidentId === undefined),
    ],
  };
}

/**
 * The mark of a failure raised now: the incident it joins (one open for its group that has not
 * gone a window without a failure), or forms (with the failures of its group within the window
 * before it, it makes `minProjects` projects), or none. A failure decided before (a poll whose
 * commit failed raises it again) is decided the same way.
 */
export function markFailure(
  lookup: FailureLookup,
  failure: {
    readonly projectId: string;
    readonly alertId: string;
    readonly key: IncidentKey;
    /** The operation attempt that failed, kept for the incident span's links. */
    readonly attempt?: IncidentSpanLink | undefined;
  },
  nowMs: number,
  settings: IncidentSettings,
): IncidentMark {
  const before = lookup.decided(failure.alertId);
  if (before !== undefined) return before;
  const mark: IncidentMark = {
    ...failure.key,
    alertId: failure.alertId,
    atMs: nowMs,
    ...(failure.attempt === undefined
      ? {}
      : { operationId: failure.attempt.operationId, attempt: failure.attempt.attempt }),
  };
  const open = lookup.openOf(failure.key);
  if (open !== undefined && nowMs - open.lastAtMs < settings.windowMs) {
    return { ...mark, incidentId: open.id };
  }
  const recent = lookup
    .aloneOf(failure.key)
    .filter((m) => m.atMs <= nowMs && nowMs - m.atMs < settings.windowMs);
  const projects = new Set([...recent.map((m) => m.projectId), failure.projectId]);
  if (projects.size < settings.minProjects) return mark;
  return { ...mark, incidentId: incidentId(failure.key, failure.alertId) };
}

/** What the sinks are to be told of an incident next, through the project that carries it. */
export interface IncidentWork {
  readonly incident: OpenIncident;
  readonly state: IncidentState;
  /** The project whose outbox takes the alert and whose record changes. */
  readonly carrier: string;
}

/**
 * What to tell the sinks now, for each open incident: that it opened (no project carries it
 * yet), that it resolved (a window has passed since its latest failure), or that it changed
 * (more projects or failures than the sinks were told, and no update of it still waiting in
 * its carrier's outbox). `watched` says which projects this process can commit to; an incident
 * whose carrier is not among them moves to its founder, or to its first watched project.
 */
export function incidentWork(
  board: IncidentBoard,
  nowMs: number,
  settings: IncidentSettings,
  watched: (projectId: string) => boolean,
  updatePending: (carrier: string, incidentId: string) => boolean,
): IncidentWork[] {
  const work: IncidentWork[] = [];
  for (const incident of board.open) {
    const carrier =
      [incident.carried?.projectId, incident.founder, ...incident.projects].find(
        (p) => p !== undefined && p !== "" && watched(p),
      ) ?? undefined;
    if (carrier === undefined) continue;
    const told = incident.carried?.projectId === carrier ? incident.carried.incident : undefined;
    if (nowMs - incident.lastAtMs >= settings.windowMs) {
      work.push({ incident, state: "resolved", carrier });
    } else if (told === undefined) {
      work.push({ incident, state: "opened", carrier });
    } else if (
      (told.projectCount < incident.projectCount ||
        told.failures < incident.failures ||
        told.lastAtMs < incident.lastAtMs) &&
      !updatePending(carrier, incident.id)
    ) {
      work.push({ incident, state: "updated", carrier });
    }
  }
  return work;
}

/** The record a carrier keeps of an incident, as the sinks are told of it now. */
export function carriedRecord(incident: OpenIncident): CarriedIncident {
  return {
    ...incident.key,
    id: incident.id,
    firstAtMs: incident.firstAtMs,
    lastAtMs: incident.lastAtMs,
    failures: incident.failures,
    projects: [...incident.projects],
    projectCount: incident.projectCount,
  };
}

/**
 * The alert that tells the sinks of an incident: one id for each thing they are told (it opened;
 * it had this many projects and failures; it resolved), the incident's id throughout.
 */
export function incidentAlert(
  work: IncidentWork,
  nowMs: number,
  projectName: (projectId: string) => string | undefined,
): Alert {
  const { incident, state } = work;
  const told = state === "updated" ? [incident.projectCount, incident.failures] : [];
  return {
    id: hash([incident.id, state, ...told], 32),
    kind: "platform_incident",
    projectId: work.carrier,
    operationId: incident.id,
    action: incident.key.action,
    status: state,
    failuresCount: incident.failures,
    error: incident.key.errorClass,
    createdAt: new Date(incident.firstAtMs).toISOString(),
    updatedAt: new Date(incident.lastAtMs).toISOString(),
    durationSeconds: Math.max(0, incident.lastAtMs - incident.firstAtMs) / 1000,
    detectedAt: new Date(nowMs).toISOString(),
    incident: {
      id: incident.id,
      state,
      regionId: incident.key.regionId,
      errorClass: incident.key.errorClass,
      projects: incident.projects.slice(0, MAX_INCIDENT_PROJECTS_LISTED).map((id) => {
        const name = projectName(id);
        return name === undefined ? { id } : { id, name: name.slice(0, 256) };
      }),
      projectCount: incident.projectCount,
    },
  };
}

/** The record of a carrier after telling the sinks `work` at `nowMs`. */
export function carriedAfter(
  record: IncidentRecord | undefined,
  work: IncidentWork,
  nowMs: number,
): IncidentRecord {
  const before = record ?? { marks: [], carried: [], resolved: [] };
  const others = before.carried.filter((c) => c.id !== work.incident.id);
  if (work.state === "resolved") {
    return {
      ...before,
      carried: others,
      resolved: [...before.resolved, { id: work.incident.id, atMs: nowMs }],
    };
  }
  return { ...before, carried: [...others, carriedRecord(work.incident)] };
}
