/**
 * What a project's state document keeps of platform incidents (`alerts/rules/incidents.ts`), committed
 * with the rest of the state so that incidents survive restarts, `kill -9` and a takeover:
 *
 * - `marks`: the project's recent failures that may group into an incident, each with the
 *   incident it joined, if any. A poll commits them in the same write as the failure's alert
 *   and its routing (held from the sinks that hold an incident's alerts), so a held alert never
 *   lacks the record of the incident that holds it.
 * - `carried`: the incidents this project carries: their alerts (opened, updated, resolved) go
 *   through its outbox, and the record says what the sinks were last told.
 * - `resolved`: incidents resolved through this project, so that one is never resolved twice
 *   (and its span, when traces are exported, is queued once: in the commit that adds it here).
 *
 * Times are epoch ms (they outlive the process). Each list is bounded, the oldest dropped first.
 */
import { z } from "zod";

/** How long marks of an incident and resolved incidents are kept: far longer than any window. */
export const INCIDENT_RECORD_RETENTION_MS = 24 * 3600_000;
/** How long a failure that joined no incident is kept: the longest window (`incidents.window`). */
export const ALONE_MARK_RETENTION_MS = 3600_000;
/** Most marks one project keeps (the newest). */
export const MAX_INCIDENT_MARKS = 50;
/** Most incidents one project carries or remembers as resolved. */
export const MAX_CARRIED_INCIDENTS = 50;
/** Most project ids a carried incident keeps (the first to join; the count goes on). */
export const MAX_INCIDENT_MEMBERS = 1000;

export const incidentKeySchema = z.object({
  action: z.string(),
  regionId: z.string(),
  errorClass: z.string(),
});
export type IncidentKey = z.infer<typeof incidentKeySchema>;

export const incidentMarkSchema = incidentKeySchema.extend({
  /** The failure's alert. */
  alertId: z.string(),
  /** When the failure was detected. */
  atMs: z.number(),
  /** The incident it joined (or formed); absent while it stands alone. */
  incidentId: z.string().optional(),
  /**
   * The operation that failed and the attempt that failed (`sync/attempts.ts`), for the incident
   * span's links. Absent in marks committed before they were kept: such a mark links nothing.
   */
  operationId: z.string().min(1).optional(),
  attempt: z.number().int().positive().optional(),
});
export type IncidentMark = z.infer<typeof incidentMarkSchema>;

export const carriedIncidentSchema = incidentKeySchema.extend({
  id: z.string().min(1),
  /** When its first failure was detected. */
  firstAtMs: z.number(),
  /** When its latest failure was detected, as the sinks were last told. */
  lastAtMs: z.number(),
  failures: z.number().int().nonnegative(),
  /** Its projects in the order they joined (the first `MAX_INCIDENT_MEMBERS`). */
  projects: z.array(z.string()).max(MAX_INCIDENT_MEMBERS),
  projectCount: z.number().int().nonnegative(),
});
export type CarriedIncident = z.infer<typeof carriedIncidentSchema>;

export const incidentRecordSchema = z.object({
  marks: z.array(incidentMarkSchema).max(MAX_INCIDENT_MARKS),
  carried: z.array(carriedIncidentSchema).max(MAX_CARRIED_INCIDENTS),
  resolved: z.array(z.object({ id: z.string(), atMs: z.number() })).max(MAX_CARRIED_INCIDENTS),
});
export type IncidentRecord = z.infer<typeof incidentRecordSchema>;

export const EMPTY_INCIDENT_RECORD: IncidentRecord = { marks: [], carried: [], resolved: [] };

/**
 * The record with `marks` added (a mark already kept, by alert id, is replaced), what is older
 * than the retention dropped, and each list bounded.
 */
export function withIncidentMarks(
  record: IncidentRecord | undefined,
  marks: readonly IncidentMark[],
  nowMs: number,
): IncidentRecord | undefined {
  const before = record ?? EMPTY_INCIDENT_RECORD;
  const added = new Set(marks.map((m) => m.alertId));
  return prunedIncidentRecord(
    {
      ...before,
      marks: [...before.marks.filter((m) => !added.has(m.alertId)), ...marks],
    },
    nowMs,
  );
}

/** The record without what has outlived the retention, bounded; undefined when empty. */
export function prunedIncidentRecord(
  record: IncidentRecord,
  nowMs: number,
): IncidentRecord | undefined {
  const since = nowMs - INCIDENT_RECORD_RETENTION_MS;
  const aloneSince = nowMs - ALONE_MARK_RETENTION_MS;
  const next: IncidentRecord = {
    marks: record.marks
      .filter((m) => m.atMs >= (m.incidentId === undefined ? aloneSince : since))
      .slice(-MAX_INCIDENT_MARKS),
    // A carried incident stays until it is resolved, however long that takes.
    carried: record.carried.slice(-MAX_CARRIED_INCIDENTS),
    resolved: record.resolved.filter((r) => r.atMs >= since).slice(-MAX_CARRIED_INCIDENTS),
  };
  return next.marks.length + next.carried.length + next.resolved.length === 0 ? undefined : next;
}

/**
 * Adds the incidents `record` carries to `latest`, by id. An incident carried by two projects
 * (rarely, for a moment) is kept as the record that told of its latest failure.
 */
export function addCarried(
  latest: Map<string, CarriedIncident>,
  record: IncidentRecord | undefined,
): void {
  for (const incident of record?.carried ?? []) {
    const seen = latest.get(incident.id);
    if (seen === undefined || incident.lastAtMs > seen.lastAtMs) latest.set(incident.id, incident);
  }
}
