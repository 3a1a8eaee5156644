import { z } from "zod";
import { resourceIdSchema } from "../../contract/index.js";
import { PLAN_NAMES } from "../model/state.js";
import { API_ROUTE_NAMES } from "./api-routes.js";
import { FAULT_KINDS } from "./faults.js";

/** Request bodies of the `/_sim` control interface. */

/** At most this many branches per created project (keeps one call bounded). */
const MAX_BRANCHES = 100;
/** One simulated year per advance: enough for any test, small enough to stay bounded. */
const MAX_ADVANCE_SECONDS = 366 * 86_400;

export const createProjectSchema = z.object({
  plan: z.enum(PLAN_NAMES),
  branches: z.number().int().min(1).max(MAX_BRANCHES).default(1),
  availability_checks: z.boolean().optional(),
});
export type SimCreateProjectRequest = z.input<typeof createProjectSchema>;

export const advanceClockSchema = z.object({
  seconds: z.number().min(0).max(MAX_ADVANCE_SECONDS),
});

export const scriptOperationSchema = z.object({
  project_id: resourceIdSchema,
  branch_id: resourceIdSchema,
  endpoint_id: resourceIdSchema.optional(),
  action: z.string().min(1).max(100),
  steps: z
    .array(
      z.object({
        status: z.string().min(1),
        after_seconds: z.number().min(0).max(MAX_ADVANCE_SECONDS),
        error: z.string().min(1).max(1000).optional(),
      }),
    )
    .min(1)
    .max(100),
});
export type SimScriptOperationRequest = z.input<typeof scriptOperationSchema>;

export const faultSchema = z
  .object({
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
    rate: z.number().min(0).max(1).optional(),
    count: z.number().int().min(1).optional(),
  })
  .refine((f) => f.kind !== "latency" || f.latency_ms !== undefined, {
    message: "a latency fault needs latency_ms",
    path: ["latency_ms"],
  })
  .refine((f) => f.kind === "status" || f.status === undefined, {
    message: "status applies to kind status only",
    path: ["status"],
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
});
export type SimBulkRequest = z.input<typeof bulkSchema>;
