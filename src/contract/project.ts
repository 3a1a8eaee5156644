import { z } from "zod";
import { resourceIdSchema, timestampSchema } from "./common.js";
import { paginationSchema } from "./operation.js";

/**
 * One entry of `GET /projects`. The real API sends many more fields; only those the exporter
 * needs are kept.
 */
export const projectListItemSchema = z.object({
  id: resourceIdSchema,
  name: z.string(),
  region_id: z.string().optional(),
  created_at: timestampSchema.optional(),
  updated_at: timestampSchema.optional(),
});
export type ProjectListItem = z.infer<typeof projectListItemSchema>;

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
