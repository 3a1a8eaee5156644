/**
 * The durable state of one project, as a store keeps it: the checkpoint (watermark and any
 * catch-up in progress), the operations still followed, the counter totals and the alert
 * outbox. One document is committed whole, so these always agree with each other (invariant 2,
 * docs/design.md).
 */
import { z } from "zod";
import { firingAlertSchema } from "./firing.js";
import { alertSchema, MAX_ALSO_RESOLVES } from "./alert-record.js";
import { incidentRecordSchema } from "./incident-record.js";
import { queuedSpanSchema, spanDeadLetterSchema } from "./span-record.js";

/** Format name and version written into every state document. */
export const STATE_FORMAT = "pgcp-exporter/project-state";
export const STATE_VERSION = 1;

/**
 * A position in a project's newest-first operations log: every record created in an earlier
 * second, and the records of `second` whose ids are listed, lie at or below it.
 */
export const positionSchema = z.object({
  /** Epoch seconds of the records' whole-second `created_at`. */
  second: z.number().int(),
  ids: z.array(z.string()),
});
export type Position = z.infer<typeof positionSchema>;

/** A first start's backfill: records created from this second on are counted as history. */
export const backfillSchema = z.object({ countFromSecond: z.number().int() });
export type Backfill = z.infer<typeof backfillSchema>;

/** A catch-up walk in progress: the records between `top` and the watermark, walked downward. */
export const segmentSchema = z.object({
  /** The newest record when the catch-up began; becomes the watermark when it completes. */
  top: positionSchema,
  /** The API's cursor to continue the walk from (records strictly older than it). */
  resumeCursor: z.string().min(1),
  /** Present while a first start's backfill is being walked (older records are not counted). */
  backfill: backfillSchema.optional(),
  /**
   * Ids of the last records read before `resumeCursor`: a page that overlaps them (a record
   * repeated across the boundary) is told from new records. Absent in older state files.
   */
  recent: z.array(z.string()).optional(),
});
export type Segment = z.infer<typeof segmentSchema>;

const optionalString = z.string().optional();

/** An operation still followed: open, or failed and watched for a retry. */
export const trackedOperationSchema = z.object({
  id: z.string(),
  projectId: z.string(),
  branchId: optionalString,
  endpointId: optionalString,
  action: z.string(),
  status: z.string(),
  failuresCount: z.number().int().nonnegative(),
  createdAtMs: z.number(),
  updatedAtMs: z.number(),
  durationMs: z.number(),
  error: optionalString,
  stuck: z.boolean(),
  stuckStatus: optionalString,
  failed: z.boolean(),
  watchUntilMs: z.number().optional(),
  /** The list cursor of the page the operation was last read on (absent: the first page). */
  cursor: optionalString,
  /**
   * Alerts raised for the operation while it is followed, each with the sinks it was routed to
   * and those a silence kept it from (by the silence's name, absent when none): a recovery goes
   * only where the alerts it resolves went, and is silenced where they were. The newest 101
   * (`MAX_ALSO_RESOLVES` + 1); absent when there are none.
   */
  alerted: z
    .array(
      z.object({
        id: z.string(),
        sinks: z.array(z.string()),
        silenced: z.array(z.object({ sink: z.string(), silence: z.string() })).optional(),
      }),
    )
    .optional(),
});

/** Counter totals of end-state arrivals of one (action, status). */
export const arrivalTotalsSchema = z.object({
  action: z.string(),
  status: z.string(),
  count: z.number().int().nonnegative(),
  /** Sum of the arrivals' durations, in seconds. */
  durationSum: z.number().nonnegative(),
  /** Cumulative-free counts per duration bucket (same order as `durationBuckets`, plus +Inf). */
  buckets: z.array(z.number().int().nonnegative()),
});

export const totalsSchema = z.object({
  /** Upper bounds (seconds) the duration buckets were counted with. */
  durationBuckets: z.array(z.number()),
  arrivals: z.array(arrivalTotalsSchema),
  /** Retries by the service (failures it moved on from), by action. */
  retries: z.record(z.string(), z.number().int().nonnegative()),
  /** Finished start_compute and suspend_compute operations, by endpoint id. */
  endpointStarts: z.record(z.string(), z.number().int().nonnegative()),
  endpointSuspends: z.record(z.string(), z.number().int().nonnegative()),
});
export type Totals = z.infer<typeof totalsSchema>;

/**
 * An alert waiting in the outbox: committed with the checkpoint that passes its operation
 * (invariant 3, docs/design.md), and removed once every sink it was routed to has acknowledged
 * it.
 */
export const outboxEntrySchema = z.object({
  alert: alertSchema,
  /** When the alert entered the outbox (epoch ms). */
  createdAtMs: z.number(),
  /** Names of the sinks that have not acknowledged it yet. */
  pending: z.array(z.string()).min(1),
  /**
   * For a recovery: per sink, the ids it resolves there (those of `resolves` and `alsoResolves`
   * the sink was sent and did not give up on), when they are not all of them. Absent: all.
   */
  resolvesBySink: z
    .record(
      z.string(),
      z
        .array(z.string())
        .min(1)
        .max(MAX_ALSO_RESOLVES + 1),
    )
    .optional(),
});
export type OutboxEntry = z.infer<typeof outboxEntrySchema>;

/** An alert a sink gave up on (too old, or refused for good); kept for operators to see. */
export const deadLetterSchema = z.object({
  alert: alertSchema,
  sink: z.string(),
  reason: z.string(),
  atMs: z.number(),
});
export type DeadLetter = z.infer<typeof deadLetterSchema>;

export const projectStateSchema = z.object({
  format: z.literal(STATE_FORMAT),
  version: z.literal(STATE_VERSION),
  projectId: z.string(),
  /** Increases by one with every commit. */
  sequence: z.number().int().nonnegative(),
  committedAtMs: z.number(),
  watermark: positionSchema,
  segment: segmentSchema.nullable(),
  tracked: z.array(trackedOperationSchema),
  /**
   * Misdated records counted already that the watermark does not cover: dated beyond the future
   * tolerance (the watermark never moves past now plus it), or dated below the watermark while
   * standing among newer records (out of order). Passed over while walks still meet them before
   * their end. Absent when there are none.
   */
  misdated: z.array(z.object({ id: z.string(), second: z.number().int() })).optional(),
  totals: totalsSchema,
  outbox: z.array(outboxEntrySchema),
  /** The most recent dead letters (bounded). */
  deadLetters: z.array(deadLetterSchema),
  /**
   * Alerts that sinks re-send while they fire (Alertmanager), committed like the outbox
   * (`firing.ts`). Absent when there are none.
   */
  firing: z.array(firingAlertSchema).optional(),
  /**
   * The project's region as last read (its failures group into platform incidents by it, from
   * the first poll after a restart on). Absent while never read.
   */
  regionId: z.string().optional(),
  /**
   * Platform incidents: this project's recent failures that may group into one, and the
   * incidents it carries (`incident-record.ts`). Absent when there are none.
   */
  incidents: incidentRecordSchema.optional(),
  /**
   * Spans waiting for the OpenTelemetry collector (`span-record.ts`), committed like the outbox.
   * Absent when there are none.
   */
  spans: z.array(queuedSpanSchema).optional(),
  /** The most recent spans the export gave up on (bounded). Absent when there are none. */
  spanDeadLetters: z.array(spanDeadLetterSchema).optional(),
});
export type ProjectState = z.infer<typeof projectStateSchema>;
