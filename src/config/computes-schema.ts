/**
 * `computes:` in the configuration: the opt-in probe that connects to active computes to read
 * their file cache and connections (`src/computes/`), and each account's overrides of how it
 * connects (`accounts[].computes`). The role's name and password come from the environment.
 */
import { z } from "zod";
import { durationSchema } from "./duration.js";

/** How the probe's connections use TLS, as libpq's `sslmode` of the same names. */
export const SSL_MODES = ["disable", "require", "verify-full"] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** The environment variables the role's name and password come from, by default. */
export const COMPUTE_ENVIRONMENT = {
  user: "PGCP_COMPUTE_USER",
  password: "PGCP_COMPUTE_PASSWORD",
} as const;

const environmentVariable = z
  .string()
  .regex(/^[A-Z_][A-Z0-9_]*$/, "must be an environment variable name");

/** A database name as Postgres takes it (at most 63 bytes). */
const databaseName = z
  .string()
  .min(1, "must not be empty")
  .refine((name) => Buffer.byteLength(name) <= 63, "must be at most 63 bytes");

const port = z.number().int().min(1).max(65_535);

const caFile = z.string().min(1, "must not be empty");

/** What an account may set differently: whether, and how, its projects' computes are probed. */
export const computeOverrideSchema = z
  .object({
    enabled: z.boolean().optional(),
    userEnv: environmentVariable.optional(),
    passwordEnv: environmentVariable.optional(),
    database: databaseName.optional(),
    port: port.optional(),
    sslmode: z.enum(SSL_MODES).optional(),
    caFile: caFile.optional(),
  })
  .strict();
export type ComputeOverride = z.infer<typeof computeOverrideSchema>;

const adviceSchema = z
  .object({
    /** After a start, how long the file cache warms before its ratio counts. */
    warmup: durationSchema.default(300),
    /** How long the ratio (or the connections) must stay past its threshold. */
    window: durationSchema.refine((s) => s > 0, "must be greater than zero").default(600),
    /** The file cache hit ratio, in percent, below which a larger compute is advised. */
    hitRatio: z.number().gt(0).max(100).default(99),
    /** The share of `max_connections` in use at or above which a larger compute is advised. */
    connections: z.number().gt(0).max(1).default(0.9),
  })
  .strict();

export const computesSchema = z
  .object({
    /** Off by default: the probe connects to the computes only when asked to. */
    enabled: z.boolean().default(false),
    userEnv: environmentVariable.default(COMPUTE_ENVIRONMENT.user),
    passwordEnv: environmentVariable.default(COMPUTE_ENVIRONMENT.password),
    database: databaseName.default("neondb"),
    port: port.default(5432),
    sslmode: z.enum(SSL_MODES).default("verify-full"),
    /** The CA certificates (PEM) that `verify-full` checks the compute's certificate against. */
    caFile: caFile.optional(),
    /** How often an active compute is read while others use it. */
    interval: durationSchema.refine((s) => s >= 1, "must be at least 1 second").default(60),
    /** How long connecting, and each statement, may take. */
    timeout: durationSchema.refine((s) => s > 0, "must be greater than zero").default(5),
    /** Computes read at once, across all projects. */
    concurrency: z.number().int().min(1).max(64).default(4),
    /** Sessions of these roles are not activity (the service's own). */
    ignoreUsers: z.array(z.string().min(1)).default(["cloud_admin"]),
    /** Sessions with these `application_name`s are not activity; a trailing `*` matches any end. */
    ignoreApplications: z.array(z.string().min(1)).default([]),
    advice: adviceSchema.prefault({}),
  })
  .strict()
  .superRefine((computes, ctx) => {
    checkCaFile(computes, ctx, []);
  });
export type ComputesConfig = z.infer<typeof computesSchema>;

/** `caFile` is read by `verify-full` only: given with another mode, it would be ignored. */
export function checkCaFile(
  settings: { readonly sslmode?: SslMode | undefined; readonly caFile?: string | undefined },
  ctx: z.core.$RefinementCtx,
  path: readonly PropertyKey[],
): void {
  if (settings.caFile !== undefined && settings.sslmode !== undefined) {
    if (settings.sslmode !== "verify-full") {
      ctx.addIssue({
        code: "custom",
        path: [...path, "caFile"],
        message: `is read with sslmode verify-full only (sslmode is ${settings.sslmode})`,
      });
    }
  }
}
