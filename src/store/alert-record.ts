/**
 * The alert record: what a person is told about an operation, as the project's state document
 * keeps it in the durable outbox until every sink has it. The alert rules (`alerts/rules/rules.ts`)
 * build it from the sync engine's transitions; each sink renders it in its own format. A
 * `compute_advice` alert is about an endpoint's compute, not an operation (`alerts/rules/advice.ts`):
 * its `operationId` and `action` are empty, its `status` is the reason, and `advice` says more.
 */
import { z } from "zod";

export const ALERT_KINDS = [
  "operation_failed",
  "operation_stuck",
  "operation_retrying",
  "operation_recovered",
  "compute_advice",
  "platform_incident",
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

/**
 * Kinds a sink takes only when one of its `match` rules names them in `kinds`: low-severity
 * notices that would be noise where every alert goes.
 */
export const OPT_IN_ALERT_KINDS: readonly AlertKind[] = ["compute_advice"];

/** What a `compute_advice` alert advises, and the reading it rests on. */
export const adviceSchema = z.object({
  /** `file_cache` or `connections`. */
  reason: z.string(),
  /** The file cache hit ratio (percent) at the reading, when known. */
  hitRatio: z.number().min(0).max(100).nullable(),
  /** Client sessions at the reading. */
  connections: z.number().int().nonnegative(),
  /** `max_connections` of the minimum size, when the size is in the table. */
  maxConnections: z.number().int().positive().nullable(),
  minComputeUnits: z.number().positive(),
  maxComputeUnits: z.number().positive(),
  /** How long the reason held before it was advised. */
  windowSeconds: z.number().nonnegative(),
  /** One sentence for people: what was seen and what to change. */
  summary: z.string(),
});
export type AdviceDetails = z.infer<typeof adviceSchema>;

const optionalString = z.string().optional();

/** Most projects a `platform_incident` alert lists by id (the count says how many there are). */
export const MAX_INCIDENT_PROJECTS_LISTED = 100;

/** Where a platform incident stands in the alert that tells of it. */
export const INCIDENT_STATES = ["opened", "updated", "resolved"] as const;
export type IncidentState = (typeof INCIDENT_STATES)[number];

/**
 * For `platform_incident`: failures of one action, in one region, with one normalised error,
 * across many projects (`alerts/rules/incidents.ts`). Each alert of an incident (opened, each update,
 * resolved) carries the same `id`.
 */
export const incidentSchema = z.object({
  /** Stable through the incident's updates and its resolution. */
  id: z.string().min(1),
  state: z.enum(INCIDENT_STATES),
  regionId: z.string(),
  /** The error text with ids, numbers, quoted values and hex taken out. */
  errorClass: z.string(),
  /** The projects whose failures joined it, in the order they joined (the first listed). */
  projects: z
    .array(z.object({ id: z.string(), name: z.string().max(256).optional() }))
    .max(MAX_INCIDENT_PROJECTS_LISTED),
  /** How many projects joined it in all. */
  projectCount: z.number().int().nonnegative(),
});
export type Incident = z.infer<typeof incidentSchema>;

/** Most characters of a name kept in an alert (the API's names are at most 256). */
export const MAX_NAME_LENGTH = 256;
const optionalName = z.string().max(MAX_NAME_LENGTH).optional();

/** Most earlier alerts of its operation a recovery resolves besides `resolves` (the newest). */
export const MAX_ALSO_RESOLVES = 100;

/** The alert as stored in the outbox and sent to sinks (times are ISO 8601 strings). */
export const alertSchema = z.object({
  /** Stable: the same transition of the same operation always yields the same id. */
  id: z.string(),
  kind: z.enum(ALERT_KINDS),
  projectId: z.string(),
  operationId: z.string(),
  branchId: optionalString,
  endpointId: optionalString,
  /**
   * The names of the project, branch and endpoint when the alert was raised, each absent while
   * unknown (and in alerts stored before names were kept).
   */
  projectName: optionalName,
  branchName: optionalName,
  endpointName: optionalName,
  action: z.string(),
  status: z.string(),
  failuresCount: z.number().int().nonnegative(),
  /** The operation's error text (failed and error statuses). */
  error: optionalString,
  createdAt: z.string(),
  updatedAt: z.string(),
  durationSeconds: z.number().nonnegative(),
  /** When the exporter noticed the transition. */
  detectedAt: z.string(),
  /** A link for people, from the configured template (e.g. the console's operations page). */
  link: optionalString,
  /** For a recovery: the id of the failure (or stuck) alert it resolves. */
  resolves: optionalString,
  /**
   * For a recovery: the other alerts of its operation it resolves (earlier failures of a retried
   * operation, a stuck or retrying alert), newest first, at most `MAX_ALSO_RESOLVES`. Absent when
   * there are none (and in alerts stored before it existed).
   */
  alsoResolves: z.array(z.string()).max(MAX_ALSO_RESOLVES).optional(),
  /** For `compute_advice`: what is advised and why. */
  advice: adviceSchema.optional(),
  /** For `platform_incident`: the incident. */
  incident: incidentSchema.optional(),
});
export type Alert = z.infer<typeof alertSchema>;

/** The ids a recovery resolves: `resolves`, then `alsoResolves` (none for other alerts). */
export function resolvedIds(alert: Alert): readonly string[] {
  return [...(alert.resolves === undefined ? [] : [alert.resolves]), ...(alert.alsoResolves ?? [])];
}
