import { z } from "zod";

/** Project, branch and endpoint ids, as the real API's schema constrains them. */
export const RESOURCE_ID_PATTERN = /^[a-z0-9-]{1,60}$/;

/** A project, branch or endpoint id (`^[a-z0-9-]{1,60}$`). */
export const resourceIdSchema = z
  .string()
  .regex(RESOURCE_ID_PATTERN, "must match ^[a-z0-9-]{1,60}$");

/** An operation id: a UUID in practice; any short non-empty string is accepted. */
export const idSchema = z.string().min(1).max(128);

/** An ISO 8601 timestamp (`Z` or an offset; whole or fractional seconds). */
export const timestampSchema = z.iso.datetime({ offset: true });

/** The error body of every failed request: `{code, message, request_id}`. */
export const errorBodySchema = z.object({
  /** May be an empty string in the real API. */
  code: z.string(),
  message: z.string(),
  request_id: z.string().optional(),
});
export type ErrorBody = z.infer<typeof errorBodySchema>;
