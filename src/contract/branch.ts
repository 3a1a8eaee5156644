import { z } from "zod";
import { resourceIdSchema, timestampSchema } from "./common.js";
import { branchEndpointRequestSchema } from "./endpoint.js";

/**
 * `POST /projects/{project_id}/branches` request body; the body itself is optional (a branch of
 * the default branch, named after its id, without a compute). Strict, as the endpoint bodies.
 * The simulator creates at most one endpoint per branch creation.
 */
export const createBranchRequestSchema = z
  .strictObject({
    branch: z
      .strictObject({
        parent_id: resourceIdSchema.optional(),
        name: z.string().min(1).max(256).optional(),
      })
      .optional(),
    endpoints: z.array(branchEndpointRequestSchema).max(1).optional(),
  })
  .optional();
export type CreateBranchRequest = z.infer<typeof createBranchRequestSchema>;

/**
 * One branch of `GET /projects/{project_id}/branches`, as the real `Branch` sends it; only what
 * the exporter shows is kept. `default` is the project's default branch (the real API also
 * sends the older `primary`, read when `default` is absent).
 */
export const branchSchema = z.object({
  id: resourceIdSchema,
  name: z.string(),
  parent_id: resourceIdSchema.nullish(),
  default: z.boolean().optional(),
  primary: z.boolean().optional(),
  created_at: timestampSchema.optional(),
});
export type Branch = z.infer<typeof branchSchema>;

/** `GET /projects/{project_id}/branches` (the real API pages it only on request). */
export const branchesResponseSchema = z.object({ branches: z.array(branchSchema) });
