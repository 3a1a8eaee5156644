import { z } from "zod";
import { resourceIdSchema } from "./common.js";
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
