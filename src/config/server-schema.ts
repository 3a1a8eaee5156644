/**
 * `listen:`, `web:`, `status:` and `metrics:` in the configuration: what the HTTP server serves
 * and to whom. Its address, TLS and basic auth from a web configuration file, the status page,
 * and how much detail `/metrics` carries.
 */
import { z } from "zod";

/**
 * How much per-project and per-endpoint detail `/metrics` carries (`metrics.detail`), each
 * level serving the families of the levels before it too: `minimal`, what the shipped alert
 * rules read and whether each project is polled; `standard`, also what the shipped dashboards
 * read, with an endpoint as two series (its info, sizes included, and its current state);
 * `full`, every family, an endpoint's state as a state set and its sizes as gauges.
 */
export const DETAIL_LEVELS = ["minimal", "standard", "full"] as const;

export type DetailLevel = (typeof DETAIL_LEVELS)[number];

export const DEFAULT_DETAIL: DetailLevel = "standard";

/** Address of the HTTP server (`/metrics`, `/healthz`, `/readyz`): `host:port` or `:port`. */
export const listenSchema = z
  .string()
  .regex(
    /^(\[[0-9a-fA-F:.]+\]|[^:\s]*):\d{1,5}$/,
    'must be "host:port" or ":port", for example "0.0.0.0:9700"',
  )
  .refine(
    (listen) => Number(listen.slice(listen.lastIndexOf(":") + 1)) <= 65_535,
    "the port must be 0..65535",
  )
  .default(":9642");

/** Who may reach the HTTP server: TLS and basic auth from a web configuration file. */
export const webSchema = z
  .object({
    /**
     * The web configuration file (the exporter toolkit's format): TLS certificate and key,
     * basic-auth users with bcrypt hashes. None: plain HTTP, open to all.
     */
    configFile: z.string().min(1).optional(),
    /** Answer /healthz and /readyz without basic auth, for probes that cannot log in. */
    healthWithoutAuth: z.boolean().default(false),
  })
  .strict()
  .default({ healthWithoutAuth: false });

/**
 * The status page at `/`: `full` (projects, failures, the outbox and dead letters, with ids
 * and error texts), `summary` (counts only), or `off` (no page).
 */
export const statusSchema = z
  .object({ page: z.enum(["off", "summary", "full"]).default("full") })
  .strict()
  .default({ page: "full" });

/** What `/metrics` exports, and in how much detail. */
export const metricsSchema = z
  .object({
    /**
     * How much per-project and per-endpoint detail to export (`DETAIL_LEVELS`);
     * `docs/metrics.md` gives each family's level and series.
     */
    detail: z.enum(DETAIL_LEVELS).default(DEFAULT_DETAIL),
    /** Also export the duration histogram per project (multiplies its series). */
    perProjectHistograms: z.boolean().default(false),
    /** Also export `pgcp_branch_info` below detail `full` (where it is always served). */
    branches: z.boolean().default(false),
    /**
     * The most branches of a project the exporter keeps (for `pgcp_branch_info` and the
     * names in alerts): its default branch, then the oldest.
     */
    maxBranchesPerProject: z.number().int().min(1).max(10_000).default(100),
    /**
     * Export only these of the families the detail level serves (names); empty: all of them.
     */
    include: z.array(z.string()).default([]),
    /** Never export these metric families (names). */
    exclude: z.array(z.string()).default([]),
    /**
     * Distinct undocumented values of `action` and of `status` a project may add as label
     * values; further ones are exported as `other`.
     */
    maxUnknownValues: z.number().int().min(0).max(1000).default(20),
  })
  .strict()
  .default({
    detail: DEFAULT_DETAIL,
    perProjectHistograms: false,
    branches: false,
    maxBranchesPerProject: 100,
    include: [],
    exclude: [],
    maxUnknownValues: 20,
  });
