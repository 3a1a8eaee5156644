/**
 * The span record: what the OpenTelemetry export is to send of an operation's attempt that
 * ended, or of a platform incident that was resolved, as the project's state document keeps it
 * in its span queue until the collector has it (`otlp/`, docs/opentelemetry.md). Spans are
 * committed with the checkpoint that passes their operations, like alerts (invariant 3,
 * docs/design.md), so a crash can repeat a span (with the same ids) but never lose one.
 */
import { z } from "zod";
import { MAX_NAME_LENGTH } from "./alert-record.js";

const optionalString = z.string().optional();
const optionalName = z.string().max(MAX_NAME_LENGTH).optional();

/** Most characters of an operation's error text a span keeps. */
export const MAX_SPAN_ERROR_LENGTH = 1024;

/** One attempt of an operation that ended (a retried operation has one per failure). */
export const operationSpanSchema = z.object({
  kind: z.literal("operation"),
  operationId: z.string().min(1),
  /** 1 for the first attempt; a retry after the n-th failure is attempt n + 1. */
  attempt: z.number().int().positive(),
  projectId: z.string(),
  branchId: optionalString,
  endpointId: optionalString,
  projectName: optionalName,
  branchName: optionalName,
  endpointName: optionalName,
  regionId: optionalString,
  action: z.string(),
  /** The end status the attempt arrived at. */
  status: z.string(),
  failuresCount: z.number().int().nonnegative(),
  error: z.string().max(MAX_SPAN_ERROR_LENGTH).optional(),
  /** The operation's `created_at` (epoch ms, the API's clock). */
  startMs: z.number(),
  /** When the attempt ended (epoch ms, the API's clock): `updated_at`, or the bound inferred. */
  endMs: z.number(),
});
export type OperationSpan = z.infer<typeof operationSpanSchema>;

/** Most operations an incident span links to (the first failures that joined it). */
export const MAX_INCIDENT_SPAN_LINKS = 128;

/** A platform incident, from its first failure to its resolution. */
export const incidentSpanSchema = z.object({
  kind: z.literal("incident"),
  incidentId: z.string().min(1),
  action: z.string(),
  regionId: z.string(),
  errorClass: z.string(),
  failures: z.number().int().nonnegative(),
  projectCount: z.number().int().nonnegative(),
  /** When its first failure was detected (epoch ms). */
  startMs: z.number(),
  /** When it was resolved (epoch ms). */
  endMs: z.number(),
  /** The operation attempts whose failures joined it. */
  links: z
    .array(z.object({ operationId: z.string().min(1), attempt: z.number().int().positive() }))
    .max(MAX_INCIDENT_SPAN_LINKS),
});
export type IncidentSpan = z.infer<typeof incidentSpanSchema>;

export const spanRecordSchema = z.discriminatedUnion("kind", [
  operationSpanSchema,
  incidentSpanSchema,
]);
export type SpanRecord = z.infer<typeof spanRecordSchema>;

/** A span waiting in the queue: when it was queued (epoch ms, our clock). */
export const queuedSpanSchema = z.object({
  span: spanRecordSchema,
  queuedAtMs: z.number(),
});
export type QueuedSpan = z.infer<typeof queuedSpanSchema>;

/** A span the export gave up on (refused for good, or too old); kept for operators to see. */
export const spanDeadLetterSchema = z.object({
  span: spanRecordSchema,
  reason: z.string(),
  atMs: z.number(),
});
export type SpanDeadLetter = z.infer<typeof spanDeadLetterSchema>;

/** The span's identity in the queue: the same attempt is queued once. */
export function spanKey(span: SpanRecord): string {
  return span.kind === "operation"
    ? `operation:${span.operationId}:${span.attempt}`
    : `incident:${span.incidentId}`;
}
