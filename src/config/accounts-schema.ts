/**
 * `api:`, `projects:` and `accounts:` in the configuration: the API's address, rate limit and
 * timeouts, the projects the single key watches, and several keys (accounts), each with the
 * projects and organisations it watches. Their keys come from the environment (`accounts.ts`).
 */
import { z } from "zod";
import { RESOURCE_ID_PATTERN } from "../contract/index.js";
import { computeOverrideSchema } from "./computes-schema.js";
import { positiveDuration } from "./duration.js";

/** The real API's base address. */
export const DEFAULT_API_URL = "https://console.neon.tech/api/v2";

export const apiSchema = z
  .object({
    url: z.url({ protocol: /^https?$/ }).default(DEFAULT_API_URL),
    /**
     * Never written in the file in production: set PGCP_API_KEY. Required unless `accounts`
     * lists the keys (each account names its own variable).
     */
    key: z
      .string({ error: "must be a string" })
      .min(1, "is required (set PGCP_API_KEY)")
      .optional(),
    requestsPerMinute: z.number().positive().default(700),
    burstPerSecond: z.number().positive().default(40),
    concurrency: z.number().int().positive().default(8),
    /** Longest a request may take, from sending it to the last byte of its answer. */
    timeout: positiveDuration.default(30),
    /** Largest answer accepted, in bytes; a larger one fails its poll (8 MiB). */
    maxResponseBytes: z
      .number()
      .int()
      .min(65_536, "must be at least 65536 (64 KiB)")
      .default(8 * 1024 * 1024),
    maxAttempts: z.number().int().min(1).max(20).default(5),
  })
  .strict();

const projectIdSchema = z.string().regex(RESOURCE_ID_PATTERN, "not a project id");

/** Project ids to watch, or `all`: every project of the key's own account. */
export const projectsSchema = z.union(
  [
    z.literal("all"),
    z.array(projectIdSchema).min(1, "lists no project id (list at least one, or write all)"),
  ],
  { error: () => "must be all, or a list of project ids, for example [my-project-123456]" },
);

/** An organisation's id, as the API writes it (`org-morning-bread-81040908`). */
const orgIdSchema = z.string().regex(/^org-[a-z0-9-]{1,56}$/, "not an organisation id (org-…)");

/** The name of the account the single-key settings (`api.key`, `projects`) make. */
export const DEFAULT_ACCOUNT = "default";

/** What an account's name may be (`accounts[].name`; the status page's `?account=` too). */
export const ACCOUNT_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * One API key and what it watches. The API's rate limit is per account, so each account has
 * its own limiter and the scheduler plans each account's projects within its own budget.
 */
export const accountSchema = z
  .object({
    /** Names the account in metrics (`account` label), logs and the status page. */
    name: z
      .string()
      .regex(ACCOUNT_NAME_PATTERN, "must be 1 to 64 letters, digits, '_', '.' or '-'"),
    /** The environment variable holding the account's API key (or `<NAME>_FILE`). */
    keyEnv: z
      .string({
        error: (issue) =>
          issue.input === undefined
            ? "is required: the environment variable that holds this account's key"
            : undefined,
      })
      .regex(/^[A-Z_][A-Z0-9_]*$/, "must be an environment variable name"),
    /** The API's base address for this account; default `api.url`. */
    url: z.url({ protocol: /^https?$/ }).optional(),
    /** The account's rate limit and requests in flight; default `api.*`. */
    requestsPerMinute: z.number().positive().optional(),
    burstPerSecond: z.number().positive().optional(),
    concurrency: z.number().int().positive().optional(),
    /** Project ids, or `all`: every project of the key's own (personal) account. */
    projects: projectsSchema.optional(),
    /** Organisations whose projects are all watched (each listed with `GET /projects?org_id=`). */
    orgs: z.array(orgIdSchema).min(1, "lists no organisation").optional(),
    /** How this account's computes are probed, where it differs from `computes`. */
    computes: computeOverrideSchema.optional(),
  })
  .strict()
  .refine((a) => a.projects !== undefined || a.orgs !== undefined, {
    message: "watches nothing: give projects (ids or all) and/or orgs",
  });
export type AccountConfig = z.infer<typeof accountSchema>;
