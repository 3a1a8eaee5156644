/**
 * The configuration schema, whole: every setting with its default. Each section's schema comes
 * from its own module (`accounts-schema.ts`, `poll-schema.ts`, `state-schema.ts`,
 * `server-schema.ts`, `alerts-schema.ts`, `sinks-schema.ts`, `computes-schema.ts`, `otlp-schema.ts`,
 * `silences.ts`); the few settings of no section (discovery, the archive, the log) are here, as
 * are the checks across sections (`cross-checks.ts`) run on the whole. The YAML file, the
 * environment and the command line are merged into one object (in that order, later wins) and
 * validated here.
 */
import { z } from "zod";
import { accountSchema, apiSchema, projectsSchema } from "./accounts-schema.js";
import { alertsSchema, incidentsSchema } from "./alerts-schema.js";
import { computesSchema } from "./computes-schema.js";
import { checkAccounts, checkComputeListings, checkHistory } from "./cross-checks.js";
import { durationSchema, positiveDuration } from "./duration.js";
import { pollSchema, stuckSchema } from "./poll-schema.js";
import { otlpSchema } from "./otlp-schema.js";
import { listenSchema, metricsSchema, statusSchema, webSchema } from "./server-schema.js";
import { silencesSchema } from "./silences.js";
import { sinkSchema } from "./sinks-schema.js";
import { stateSchema } from "./state-schema.js";

export const configSchema = z
  .object({
    api: apiSchema,
    /**
     * Project ids to watch, or `all` to discover every project the key can see. Required
     * unless `accounts` is set (each account then lists its own).
     */
    projects: projectsSchema.optional(),
    /** Several API keys (accounts), each with its projects and organisations. */
    accounts: z
      .array(accountSchema)
      .min(1, "lists no account")
      .refine(
        (accounts) => new Set(accounts.map((a) => a.name)).size === accounts.length,
        "account names must be unique",
      )
      .optional(),
    /** How often `all` and organisations are discovered again. */
    discoveryInterval: positiveDuration.default(300),
    /**
     * A project discovery no longer finds stops being polled at once (its state is kept); its
     * series stay on /metrics this long, then go.
     */
    discoveryGrace: durationSchema.default(600),
    state: stateSchema.default(stateSchema.parse({})),
    /**
     * The operations archive: `postgres` upserts every operation that reaches an end status
     * into the `pgcp_operations` table, in the same transaction as the state commit that counts
     * it (so it needs the Postgres state store); `off` keeps none.
     */
    history: z.enum(["off", "postgres"]).default("off"),
    listen: listenSchema,
    web: webSchema,
    poll: pollSchema.default(pollSchema.parse({})),
    stuck: stuckSchema.default(stuckSchema.parse({})),
    alerts: alertsSchema.default(alertsSchema.parse({})),
    /**
     * Where alerts go. Empty: a Slack, webhook and/or PagerDuty sink from PGCP_SLACK_WEBHOOK_URL,
     * PGCP_WEBHOOK_URL and PGCP_PAGERDUTY_ROUTING_KEY.
     */
    sinks: z
      .array(sinkSchema)
      .default([])
      .refine(
        (sinks) => new Set(sinks.map((s) => s.name)).size === sinks.length,
        "sink names must be unique",
      ),
    /**
     * Quiet windows: alerts they match are not sent to the sinks they cover (`silences.ts`).
     * Each is a one-off (`start`, `end`) or recurring (`cron`, `duration`, `timezone`) window.
     */
    silences: silencesSchema,
    /**
     * Platform incidents: failures of one action, in one region, with the same error once ids
     * and numbers are taken out, across at least `minProjects` projects within `window`, are
     * alerted as one incident (`alerts/rules/incidents.ts`).
     */
    incidents: incidentsSchema.default(incidentsSchema.parse({})),
    /**
     * The compute probe (off by default): reads the file cache and connections of active
     * computes, never waking one and never keeping one awake (`computes-schema.ts`).
     */
    computes: computesSchema.prefault({}),
    status: statusSchema,
    metrics: metricsSchema,
    /**
     * The OpenTelemetry export (off unless an endpoint is set): operations and incidents as
     * spans, the metrics over OTLP (`otlp-schema.ts`).
     */
    otlp: otlpSchema.prefault({}),
    log: z
      .object({
        level: z
          .enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"])
          .default("info"),
        /** auto: pretty when standard output is a terminal, else JSON lines. */
        format: z.enum(["auto", "json", "pretty"]).default("auto"),
      })
      .strict()
      .default({ level: "info", format: "auto" }),
  })
  .strict()
  // Also when other settings are wrong, so that every problem is listed at once.
  .superRefine(checkAccounts, { when: () => true })
  .superRefine(checkHistory, { when: () => true })
  .superRefine(checkComputeListings, { when: () => true });

export type Config = z.infer<typeof configSchema>;
/** The configuration before defaults: what a file, the environment and flags may say. */
export type ConfigInput = z.input<typeof configSchema>;
