import { z } from "zod";
import { resourceIdSchema, timestampSchema } from "./common.js";
import { operationSchema } from "./operation.js";

/** Endpoint types. Read-only endpoints are read replicas (paid plans only). */
export const ENDPOINT_TYPES = ["read_write", "read_only"] as const;
export type EndpointType = (typeof ENDPOINT_TYPES)[number];

/** Endpoint states known to the real API; the wire schema accepts any other string too. */
export const ENDPOINT_STATES = ["init", "active", "idle"] as const;
export type KnownEndpointState = (typeof ENDPOINT_STATES)[number];
export type EndpointState = KnownEndpointState | (string & {});

/**
 * Compute sizes (seed section 2.5): compute units and the `max_connections` that follows from
 * the (minimum) size. 1 CU = 1 vCPU and 4 GB RAM.
 */
export const COMPUTE_SIZES = [
  { cu: 0.25, maxConnections: 112 },
  { cu: 0.5, maxConnections: 225 },
  { cu: 1, maxConnections: 450 },
  { cu: 2, maxConnections: 901 },
  { cu: 3, maxConnections: 1351 },
  { cu: 4, maxConnections: 1802 },
  { cu: 5, maxConnections: 2253 },
  { cu: 6, maxConnections: 2703 },
  { cu: 7, maxConnections: 3154 },
  { cu: 8, maxConnections: 3604 },
] as const;

/** The one size a free-plan endpoint may have. */
export const FREE_PLAN_CU = 0.25;

/** `max_connections` for a compute of `minCu` units, or undefined for a size not in the table. */
export function maxConnectionsFor(minCu: number): number | undefined {
  return COMPUTE_SIZES.find((s) => s.cu === minCu)?.maxConnections;
}

/** Auto-suspend delay (real API field `suspend_timeout_seconds`). */
export const SUSPEND_TIMEOUT = {
  /** The service's default, also what `0` stands for. */
  defaultSeconds: 300,
  /** Seven days. */
  maxSeconds: 604_800,
  /** `-1` switches auto-suspend off. */
  never: -1,
} as const;

/** The delay that `suspend_timeout_seconds` stands for, in seconds, or null for "never". */
export function effectiveSuspendSeconds(suspendTimeoutSeconds: number | undefined): number | null {
  if (suspendTimeoutSeconds === SUSPEND_TIMEOUT.never) return null;
  if (suspendTimeoutSeconds === undefined || suspendTimeoutSeconds === 0) {
    return SUSPEND_TIMEOUT.defaultSeconds;
  }
  return suspendTimeoutSeconds;
}

const computeUnitSchema = z.number().min(0.25);
const suspendTimeoutSchema = z.number().int().min(-1).max(SUSPEND_TIMEOUT.maxSeconds);

/** A compute endpoint, as the seed and the real API (a superset) send it. */
export const endpointSchema = z.object({
  id: resourceIdSchema,
  host: z.string(),
  proxy_host: z.string(),
  project_id: resourceIdSchema,
  branch_id: resourceIdSchema,
  region_id: z.string(),
  type: z.enum(ENDPOINT_TYPES),
  autoscaling_limit_min_cu: computeUnitSchema,
  autoscaling_limit_max_cu: computeUnitSchema,
  current_state: z.string().min(1),
  pending_state: (z.string().min(1) as z.ZodType<EndpointState>).optional(),
  settings: z.object({ pg_settings: z.record(z.string(), z.string()).optional() }).loose(),
  pooler_enabled: z.boolean(),
  pooler_mode: z.string(),
  disabled: z.boolean(),
  passwordless_access: z.boolean(),
  last_active: timestampSchema.optional(),
  created_at: timestampSchema,
  updated_at: timestampSchema,
  /** Real API: -1 never suspends, 0 means the default 300 s, at most 604800 (7 days). */
  suspend_timeout_seconds: suspendTimeoutSchema.optional(),
  provisioner: z.string().optional(),
  creation_source: z.string().optional(),
  name: z.string().optional(),
  started_at: timestampSchema.optional(),
  suspended_at: timestampSchema.optional(),
  compute_release_version: z.string().optional(),
});
export type Endpoint = z.infer<typeof endpointSchema>;

/** `GET /projects/{project_id}/endpoints` */
export const endpointsResponseSchema = z.object({ endpoints: z.array(endpointSchema) });

/**
 * `endpointsResponseSchema` compiled, for the listing of every poll's endpoints (see
 * `compiledOperationsPageSchema`).
 */
export const compiledEndpointsResponseSchema = z.compile(endpointsResponseSchema, {
  strict: true,
});

/**
 * The answer of every call that changes an endpoint (create, update, delete, start, suspend,
 * restart): the endpoint and the operations the change started.
 */
export const endpointOperationsResponseSchema = z.object({
  endpoint: endpointSchema,
  operations: z.array(operationSchema),
});
export type EndpointOperationsResponse = z.infer<typeof endpointOperationsResponseSchema>;

/** Provisioners the real API names; the simulator's computes use `k8s-neonvm` by default. */
export const PROVISIONERS = ["k8s-neonvm", "k8s-pod"] as const;

/**
 * The fields of an endpoint a client may set on create and update besides its branch, type and
 * sizes (the real API's `EndpointCreateRequest`/`EndpointUpdateRequest`). `settings` holds
 * `pg_settings` only.
 */
const endpointSettingsFields = {
  name: z.string().min(1).max(64).optional(),
  disabled: z.boolean().optional(),
  pooler_enabled: z.boolean().optional(),
  pooler_mode: z.literal("transaction").optional(),
  settings: z.strictObject({ pg_settings: z.record(z.string(), z.string()).optional() }).optional(),
  provisioner: z.enum(PROVISIONERS).optional(),
  passwordless_access: z.boolean().optional(),
  autoscaling_limit_min_cu: computeUnitSchema.optional(),
  autoscaling_limit_max_cu: computeUnitSchema.optional(),
  suspend_timeout_seconds: suspendTimeoutSchema.optional(),
};

/**
 * `POST /projects/{project_id}/endpoints` request body. Strict: a field the API does not take
 * is refused (400 naming it) rather than dropped.
 */
export const createEndpointRequestSchema = z.strictObject({
  endpoint: z.strictObject({
    branch_id: resourceIdSchema,
    type: z.enum(ENDPOINT_TYPES),
    region_id: z.string().optional(),
    ...endpointSettingsFields,
  }),
});
export type CreateEndpointRequest = z.infer<typeof createEndpointRequestSchema>;

/** `PATCH /projects/{project_id}/endpoints/{endpoint_id}` request body (strict, as create). */
export const updateEndpointRequestSchema = z.strictObject({
  endpoint: z.strictObject({
    branch_id: resourceIdSchema.optional(),
    ...endpointSettingsFields,
  }),
});
export type UpdateEndpointRequest = z.infer<typeof updateEndpointRequestSchema>;

/**
 * One endpoint of `POST /projects/{project_id}/branches` (`endpoints: [...]`), strict; the real
 * API takes fewer fields here than on an endpoint's own create.
 */
export const branchEndpointRequestSchema = z.strictObject({
  type: z.enum(ENDPOINT_TYPES),
  settings: endpointSettingsFields.settings,
  provisioner: endpointSettingsFields.provisioner,
  autoscaling_limit_min_cu: endpointSettingsFields.autoscaling_limit_min_cu,
  autoscaling_limit_max_cu: endpointSettingsFields.autoscaling_limit_max_cu,
  suspend_timeout_seconds: endpointSettingsFields.suspend_timeout_seconds,
});
export type BranchEndpointRequest = z.infer<typeof branchEndpointRequestSchema>;
