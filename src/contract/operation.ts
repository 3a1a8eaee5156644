import { z } from "zod";
import { idSchema, resourceIdSchema, timestampSchema } from "./common.js";

/**
 * Operation actions named by the seed specification. The real API has many more and keeps
 * adding them, so the wire schema accepts any string: these constants exist for code that
 * produces or reasons about the known ones.
 */
export const KNOWN_OPERATION_ACTIONS = [
  "apply_config",
  "apply_storage_config",
  "check_availability",
  "create_branch",
  "create_timeline",
  "delete_tenant",
  "start_compute",
  "suspend_compute",
] as const;
export type KnownOperationAction = (typeof KNOWN_OPERATION_ACTIONS)[number];

/**
 * Further actions the real API documents (its OpenAPI schema's `OperationAction`). Values in
 * neither list are still accepted: they are "unknown", which bounds how many become labels.
 */
export const DOCUMENTED_OPERATION_ACTIONS: readonly string[] = [
  ...KNOWN_OPERATION_ACTIONS,
  "create_compute",
  "delete_timeline",
  "import_data",
  "tenant_ignore",
  "tenant_attach",
  "tenant_detach",
  "tenant_reattach",
  "replace_safekeeper",
  "disable_maintenance",
  "prepare_secondary_pageserver",
  "switch_pageserver",
  "detach_parent_branch",
  "timeline_archive",
  "timeline_unarchive",
  "start_reserved_compute",
  "sync_dbs_and_roles_from_compute",
  "apply_schema_from_branch",
  "timeline_mark_invisible",
  "timeline_update_protected_config",
  "prewarm_replica",
  "promote_replica",
  "set_storage_non_dirty",
  "swap_binding_id",
  "finalize_migration",
  "mark_migration_prepared",
  "update_catalog",
];
/**
 * Actions that change an endpoint's state or settings: an exporter lists a project's endpoints
 * when it sees one of them start or end, rather than only on a timer.
 */
export const ENDPOINT_OPERATION_ACTIONS: ReadonlySet<string> = new Set([
  "apply_config",
  "create_compute",
  "start_compute",
  "start_reserved_compute",
  "suspend_compute",
]);

/**
 * Actions that create, delete or move a branch: an exporter lists a project's branches when it
 * sees one of them start or end (and once at its start), not on a timer.
 */
export const BRANCH_OPERATION_ACTIONS: ReadonlySet<string> = new Set([
  "create_branch",
  "create_timeline",
  "delete_timeline",
  "detach_parent_branch",
]);

/**
 * Actions the control plane runs by itself on a timer, in every project alike (seed 2.2: the
 * availability checker). They are not a sign that anybody is using a project: an exporter
 * does not poll a project more often for them.
 */
export const PERIODIC_OPERATION_ACTIONS: ReadonlySet<string> = new Set(["check_availability"]);

/** An action: one of the known values, or any other string the service starts sending. */
export type OperationAction = KnownOperationAction | (string & {});

/**
 * Statuses in which an operation has stopped. `failed` may still be retried by the service
 * (its `failures_count` then grows and the status moves on); the others are final.
 */
export const END_STATUSES = ["finished", "failed", "error", "cancelled", "skipped"] as const;
export type EndStatus = (typeof END_STATUSES)[number];

/**
 * Statuses in which an operation is still in progress. The seed names the cancelling state
 * `cancellation_pending`, the real API `cancelling`: both are accepted.
 */
export const OPEN_STATUSES = [
  "scheduling",
  "running",
  "cancelling",
  "cancellation_pending",
] as const;
export type OpenStatus = (typeof OPEN_STATUSES)[number];

export type KnownOperationStatus = EndStatus | OpenStatus;
/** A status: one of the known values, or any other string the service starts sending. */
export type OperationStatus = KnownOperationStatus | (string & {});

const endStatuses: ReadonlySet<string> = new Set(END_STATUSES);
const openStatuses: ReadonlySet<string> = new Set(OPEN_STATUSES);

/** True for the statuses in which an operation has stopped (finished, failed, error, …). */
export function isEndStatus(status: OperationStatus): status is EndStatus {
  return endStatuses.has(status);
}

/** True for the statuses the seed or the real API documents as "still in progress". */
export function isOpenStatus(status: OperationStatus): status is OpenStatus {
  return openStatuses.has(status);
}

/** True for a status value that neither the seed nor the real API documents. */
export function isUnknownStatus(status: OperationStatus): boolean {
  return !endStatuses.has(status) && !openStatuses.has(status);
}

/**
 * One operation record, as both the seed and the real API (a superset) send it. Unknown fields
 * are dropped, unknown action and status values pass through unchanged. An optional field may
 * come as `null` (the real API's schema makes it optional, and a service that writes nulls for
 * absent values is common): it is read, and the exporter takes it as absent
 * (`OPTIONAL_OPERATION_FIELDS`, `sync/record-bounds.ts`).
 */
export const operationSchema = z.object({
  id: idSchema,
  project_id: resourceIdSchema,
  /** Required by the seed; optional in the real API's schema. */
  branch_id: resourceIdSchema.nullish(),
  endpoint_id: resourceIdSchema.nullish(),
  action: z.string().min(1),
  status: z.string().min(1),
  failures_count: z.number().int().nonnegative(),
  created_at: timestampSchema,
  updated_at: timestampSchema,
  /** Real API only (required there); absent in the seed's records. */
  total_duration_ms: z.number().int().nonnegative().nullish(),
  /** Real API only: the failure message of a failed operation. */
  error: z.string().nullish(),
  /** Real API only: when the operation was last retried. */
  retry_at: timestampSchema.nullish(),
});
export type Operation = z.infer<typeof operationSchema>;

/** The fields of a record that may be absent (or `null`). */
export const OPTIONAL_OPERATION_FIELDS = [
  "branch_id",
  "endpoint_id",
  "total_duration_ms",
  "error",
  "retry_at",
] as const satisfies readonly (keyof Operation)[];

/** The `pagination` object: an opaque cursor (a microsecond-precision timestamp). */
export const paginationSchema = z.object({ cursor: z.string().min(1) });
export type Pagination = z.infer<typeof paginationSchema>;

/** `GET /projects/{project_id}/operations` */
export const operationsPageSchema = z.object({
  operations: z.array(operationSchema),
  /** Present on every page of the real API, including the last one. */
  pagination: paginationSchema.optional(),
});
export type OperationsPage = z.infer<typeof operationsPageSchema>;

/**
 * `operationsPageSchema` compiled by zod's ahead-of-time compiler (`z.compile`), for the client,
 * which reads a page on every poll. A valid page is checked and copied by generated code, at a
 * quarter of the runtime parser's time and garbage per record (the runtime parser was most of
 * what a catch-up allocated); an invalid one falls back to the runtime parser, so what it
 * reports is the same. `strict`: a change that the compiler cannot model fails at load, in
 * every test, rather than falling back to the slow path in silence.
 */
export const compiledOperationsPageSchema = z.compile(operationsPageSchema, { strict: true });

/** `GET /projects/{project_id}/operations/{operation_id}` */
export const operationResponseSchema = z.object({ operation: operationSchema });

/** The bounds of the `limit` query parameter of the operations list (real API: 1..1000). */
export const OPERATIONS_LIMIT = { min: 1, max: 1000 } as const;
