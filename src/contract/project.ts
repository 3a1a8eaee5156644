import { z } from "zod";
import { resourceIdSchema, timestampSchema } from "./common.js";
import { PROVISIONERS } from "./endpoint.js";
import { paginationSchema } from "./operation.js";

/**
 * One entry of `GET /projects`. The real API sends many more fields; only those the exporter
 * needs are kept.
 */
export const projectListItemSchema = z.object({
  id: resourceIdSchema,
  name: z.string(),
  region_id: z.string().optional(),
  /** The Postgres major version (real API: required). */
  pg_version: z.number().int().positive().optional(),
  /** The organisation the project belongs to; absent for a personal project. */
  org_id: resourceIdSchema.nullish(),
  created_at: timestampSchema.optional(),
  updated_at: timestampSchema.optional(),
});
export type ProjectListItem = z.infer<typeof projectListItemSchema>;

/** `GET /projects/{project_id}`: the project (a superset of the list entry). */
export const projectResponseSchema = z.object({ project: projectListItemSchema });

/**
 * `GET /organizations/{org_id}` (real API: the organisation itself, not wrapped). Only what the
 * exporter shows is kept.
 */
export const organizationSchema = z.object({ id: resourceIdSchema, name: z.string() });
export type Organization = z.infer<typeof organizationSchema>;

/** `GET /projects` (cursor paging, `limit` 1..400, default 10). */
export const projectsPageSchema = z.object({
  projects: z.array(projectListItemSchema),
  pagination: paginationSchema.optional(),
});
export type ProjectsPage = z.infer<typeof projectsPageSchema>;

/**
 * `GET /projects` as a client reads it: the page's shape is checked, each entry on its own, so
 * that one entry the exporter cannot use does not cost it every other project of the page.
 */
export const projectsPageEntriesSchema = z.object({
  projects: z.array(z.unknown()),
  pagination: paginationSchema.optional(),
});

/** The bounds and default of the `limit` query parameter of the projects list. */
export const PROJECTS_LIMIT = { min: 1, max: 400, default: 10 } as const;

/** The Postgres major versions a project may be created with (real API: 14..18). */
export const PG_VERSIONS = { min: 14, max: 18, default: 17 } as const;

/**
 * `POST /projects` request body. Strict: a field the simulator does not take is refused (400
 * naming it) rather than dropped. `org_id` may also be sent as a query parameter.
 */
export const createProjectRequestSchema = z.strictObject({
  project: z.strictObject({
    name: z.string().min(1).max(256).optional(),
    org_id: resourceIdSchema.optional(),
    region_id: z.string().optional(),
    pg_version: z.number().int().min(PG_VERSIONS.min).max(PG_VERSIONS.max).optional(),
    provisioner: z.enum(PROVISIONERS).optional(),
    branch: z
      .strictObject({
        name: z.string().min(1).max(256).optional(),
        role_name: z.string().min(1).max(63).optional(),
        database_name: z.string().min(1).max(63).optional(),
      })
      .optional(),
    default_endpoint_settings: z
      .strictObject({
        autoscaling_limit_min_cu: z.number().min(0.25).optional(),
        autoscaling_limit_max_cu: z.number().min(0.25).optional(),
        suspend_timeout_seconds: z.number().int().min(-1).max(604_800).optional(),
      })
      .optional(),
  }),
});
export type CreateProjectRequest = z.infer<typeof createProjectRequestSchema>;
