/**
 * The alert record: what a person is told about an operation, as the project's state document
 * keeps it in the durable outbox until every sink has it. The alert rules (`alerts/rules.ts`)
 * build it from the sync engine's transitions; each sink renders it in its own format.
 */
import { z } from "zod";

export const ALERT_KINDS = [
  "operation_failed",
  "operation_stuck",
  "operation_retrying",
  "operation_recovered",
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

const optionalString = z.string().optional();

/** The alert as stored in the outbox and sent to sinks (times are ISO 8601 strings). */
export const alertSchema = z.object({
  /** Stable: the same transition of the same operation always yields the same id. */
  id: z.string(),
  kind: z.enum(ALERT_KINDS),
  projectId: z.string(),
  operationId: z.string(),
  branchId: optionalString,
  endpointId: optionalString,
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
});
export type Alert = z.infer<typeof alertSchema>;
