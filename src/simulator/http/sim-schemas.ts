import { z } from "zod";
import { resourceIdSchema } from "../../contract/index.js";
import { PLAN_NAMES } from "../model/state.js";
import { API_ROUTE_NAMES } from "./api-routes.js";
import { EXTENSION_MODES } from "../computes/modes.js";
import { findRegion, unknownRegionMessage } from "../model/regions.js";
import { FAULT_KIND_ROUTES, FAULT_KINDS } from "./faults.js";

/** Request bodies of the `/_sim` control interface. */

/** At most this many branches per created project (keeps one call bounded). */
const MAX_BRANCHES = 100;
/** One simulated year per advance: enough for any test, small enough to stay bounded. */
const MAX_ADVANCE_SECONDS = 366 * 86_400;

export const createProjectSchema = z
  .object({
    plan: z.enum(PLAN_NAMES),
    branches: z.number().int().min(1).max(MAX_BRANCHES).default(1),
    availability_checks: z.boolean().optional(),
    /** The organisation the project belongs to (it must exist). */
    org_id: resourceIdSchema.optional(),
    /** The user owning a personal project (default: the default user). */
    user: resourceIdSchema.optional(),
    /** The project's region (default `aws-us-east-2`); checked against `REGION_IDS`. */
    region_id: z.string().optional(),
  })
  .refine((p) => p.org_id === undefined || p.user === undefined, {
    message: "a project belongs to an organization (org_id) or to a user (user), not both",
    path: ["user"],
  });
export type SimCreateProjectRequest = z.input<typeof createProjectSchema>;

export const createOrganizationSchema = z.object({
  /** Default: generated, `org-<words>-<8 digits>`. */
  id: resourceIdSchema.optional(),
  name: z.string().min(1).max(256),
  members: z.array(resourceIdSchema).max(1000).optional(),
});
export type SimCreateOrganizationRequest = z.input<typeof createOrganizationSchema>;

export const addMemberSchema = z.object({ user: resourceIdSchema });

const apiKeyText = z.string().min(1).max(1024).regex(/^\S+$/, "must not contain whitespace");
export const createApiKeySchema = z.union([
  z.strictObject({ key: apiKeyText, user: resourceIdSchema }),
  z.strictObject({ key: apiKeyText, org: resourceIdSchema }),
]);
export type SimCreateApiKeyRequest = z.input<typeof createApiKeySchema>;

export const advanceClockSchema = z.object({
  seconds: z.number().min(0).max(MAX_ADVANCE_SECONDS),
});

/**
 * Scripted operations may carry hostile values on purpose (tests of a client's robustness):
 * any non-empty action, status and error text up to this many characters.
 */
export const MAX_SCRIPTED_TEXT = 1024 * 1024;
/**
 * Bound of a misdated record's offset (about 1,584 years either way); the shown time is also
 * kept within years 0001..9999 (see OperationLog).
 */
export const MAX_CREATED_AT_OFFSET_SECONDS = 5e10;

const offsetSeconds = z
  .number()
  .min(-MAX_CREATED_AT_OFFSET_SECONDS)
  .max(MAX_CREATED_AT_OFFSET_SECONDS);

export const scriptOperationSchema = z.object({
  project_id: resourceIdSchema,
  branch_id: resourceIdSchema,
  endpoint_id: resourceIdSchema.optional(),
  action: z.string().min(1).max(MAX_SCRIPTED_TEXT),
  steps: z
    .array(
      z.object({
        status: z.string().min(1).max(MAX_SCRIPTED_TEXT),
        after_seconds: z.number().min(0).max(MAX_ADVANCE_SECONDS),
        error: z.string().min(1).max(MAX_SCRIPTED_TEXT).optional(),
      }),
    )
    .min(1)
    .max(100),
  created_at_offset_seconds: offsetSeconds.optional(),
});
export type SimScriptOperationRequest = z.input<typeof scriptOperationSchema>;

/** The largest padded body of an `oversized` fault (1 GiB). */
export const MAX_OVERSIZED_BYTES = 1024 * 1024 * 1024;

/** The longest action a `failed_operations` fault may name. */
const MAX_FAULT_ACTION = 1024;

/** Fields that belong to one kind only, with that kind. */
const KIND_FIELDS = [
  ["status", "status"],
  ["retry_after_seconds", "status"],
  ["latency_ms", "latency"],
  ["drip_bytes", "drip"],
  ["drip_interval_ms", "drip"],
  ["size_bytes", "oversized"],
  ["offset_seconds", "misdated"],
  ["action", "failed_operations"],
  ["region_id", "failed_operations"],
  ["error", "failed_operations"],
] as const;

/** Fields a kind cannot do without. */
const REQUIRED_FIELDS = [
  ["latency", "latency_ms", "a latency fault"],
  ["oversized", "size_bytes", "an oversized fault"],
  ["misdated", "offset_seconds", "a misdated fault"],
  ["failed_operations", "action", "a failed_operations fault"],
  ["failed_operations", "error", "a failed_operations fault"],
] as const;

/** What the operation kinds take of the request filters; they hit operations, not requests. */
const OPERATION_KIND_FILTERS = [
  ["misdated", ["route", "method", "project_id"], "it hits operations as they are created"],
  ["failed_operations", ["route", "method"], "it hits operations as they run"],
] as const;

export const faultSchema = z
  .object({
    project_id: resourceIdSchema.optional(),
    route: z.enum(API_ROUTE_NAMES).optional(),
    method: z
      .string()
      .transform((m) => m.toUpperCase())
      .pipe(z.enum(["GET", "POST", "PATCH", "DELETE"]))
      .optional(),
    kind: z.enum(FAULT_KINDS),
    status: z.number().int().min(400).max(599).optional(),
    retry_after_seconds: z.number().int().min(0).max(86_400).optional(),
    latency_ms: z.number().int().min(0).max(120_000).optional(),
    drip_bytes: z
      .number()
      .int()
      .min(1)
      .max(1024 * 1024)
      .optional(),
    drip_interval_ms: z.number().int().min(1).max(600_000).optional(),
    size_bytes: z.number().int().min(1).max(MAX_OVERSIZED_BYTES).optional(),
    offset_seconds: offsetSeconds.optional(),
    action: z.string().min(1).max(MAX_FAULT_ACTION).optional(),
    region_id: z.string().optional(),
    error: z.string().min(1).max(MAX_SCRIPTED_TEXT).optional(),
    rate: z.number().min(0).max(1).optional(),
    count: z.number().int().min(1).optional(),
  })
  .superRefine((f, ctx) => {
    for (const [kind, field, what] of REQUIRED_FIELDS) {
      if (f.kind === kind && f[field] === undefined) {
        ctx.addIssue({ code: "custom", message: `${what} needs ${field}`, path: [field] });
      }
    }
    for (const [field, kind] of KIND_FIELDS) {
      if (f[field] !== undefined && f.kind !== kind) {
        ctx.addIssue({
          code: "custom",
          message: `${field} applies to kind ${kind} only`,
          path: [field],
        });
      }
    }
    for (const [kind, fields, why] of OPERATION_KIND_FILTERS) {
      if (f.kind !== kind) continue;
      for (const field of fields) {
        if (f[field] !== undefined) {
          ctx.addIssue({
            code: "custom",
            message: `${field} does not apply to ${kind} (${why})`,
            path: [field],
          });
        }
      }
    }
    if (f.region_id !== undefined && findRegion(f.region_id) === undefined) {
      ctx.addIssue({
        code: "custom",
        message: unknownRegionMessage(f.region_id),
        path: ["region_id"],
      });
    }
    const routes = FAULT_KIND_ROUTES[f.kind];
    if (f.route !== undefined && routes !== undefined && !routes.includes(f.route)) {
      ctx.addIssue({
        code: "custom",
        message: `${f.kind} applies to ${routes.join(", ")} only`,
        path: ["route"],
      });
    }
  });
export type SimFaultRequest = z.input<typeof faultSchema>;

export const bulkSchema = z.object({
  projects: z.number().int().min(1).max(100_000),
  operations_per_project: z.number().int().min(0).max(10_000_000),
  plan: z.enum(PLAN_NAMES).optional(),
  span_seconds: z
    .number()
    .positive()
    .max(10 * 366 * 86_400)
    .optional(),
  availability_checks: z.boolean().optional(),
  /** The region of every project created (default `aws-us-east-2`). */
  region_id: z.string().optional(),
});
export type SimBulkRequest = z.input<typeof bulkSchema>;

/** The largest working set a test may give an endpoint (1 PiB). */
const MAX_WORKING_SET_BYTES = 2 ** 50;

/**
 * `POST /_sim/endpoints/{endpoint_id}/compute`: each field given is applied. `hit_ratio`
 * (0..100) is the ratio the compute runs at, null for the modelled one again;
 * `working_set_bytes` what the modelled ratio follows; `extension` `missing` (the view does
 * not exist: 42P01) or `other_columns`; `hang`: statements on the endpoint's simulated objects
 * (the view, `pg_stat_activity`, …) hang until it is cleared.
 */
export const computeSettingsSchema = z.strictObject({
  hit_ratio: z.number().min(0).max(100).nullable().optional(),
  working_set_bytes: z.number().int().min(0).max(MAX_WORKING_SET_BYTES).optional(),
  extension: z.enum(EXTENSION_MODES).optional(),
  hang: z.boolean().optional(),
});
export type SimComputeRequest = z.input<typeof computeSettingsSchema>;
