/**
 * `state:` in the configuration: where the exporter keeps its durable state, the file store (a
 * directory) or the Postgres store shared by replicas, with its schema and leases.
 */
import { z } from "zod";
import { SCHEMA_NAME_PATTERN } from "../store/postgres-transaction.js";
import { durationSchema } from "./duration.js";

export const stateSchema = z
  .object({
    /** The file store (the default): one `<project>.state.json` per project. */
    dir: z.string().min(1).default("./state"),
    /**
     * `postgres://…`: the Postgres store instead, shared by replicas that split the projects
     * through leases. Holds a password, if any: set it with PGCP_STATE_URL (or PGPASSWORD).
     */
    url: z
      .string()
      .regex(/^postgres(ql)?:\/\/\S*$/, "must be a postgres:// or postgresql:// URL")
      .optional(),
    /**
     * Postgres store: the schema of its tables, created if missing. Unset: the first schema of
     * the role's search path. Set here rather than with `options` in the URL, which poolers in
     * transaction mode refuse.
     */
    schema: z
      .string()
      .regex(SCHEMA_NAME_PATTERN, "must be a schema name: letters, digits and _, at most 63")
      .optional(),
    /** Postgres store: how long a replica's claim on a project lasts without renewal. */
    leaseDuration: durationSchema.refine((s) => s >= 1, "must be at least 1 second").default(30),
  })
  .strict();
