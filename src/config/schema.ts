/**
 * The configuration schema: every setting with its default. The YAML file, the environment and
 * the command line are merged into one object (in that order, later wins) and validated here.
 */
import { z } from "zod";
import { RESOURCE_ID_PATTERN } from "../contract/index.js";
import { ALERT_KINDS } from "../store/index.js";
import { SCHEMA_NAME_PATTERN } from "../store/postgres-transaction.js";
import { computeOverrideSchema, computesSchema } from "./computes-schema.js";
import { durationSchema, parseDuration } from "./duration.js";
import { unknownKey, type SettingHint, type SettingHints } from "./problems.js";
import { silencesSchema } from "./silences.js";

/** The real API's base address. */
export const DEFAULT_API_URL = "https://console.neon.tech/api/v2";

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

const positiveDuration = durationSchema.refine((s) => s > 0, "must be greater than zero");

const apiSchema = z
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

const pollSchema = z
  .object({
    /** How often a project without open operations is polled. */
    interval: positiveDuration.default(30),
    /** How often a project with open operations is polled (the seed suggests 5 s). */
    fastInterval: positiveDuration.default(5),
    /**
     * How often each project's endpoints are listed besides when an operation that changes them
     * starts or ends (a refresh for drift); 0 turns the listing off.
     */
    endpointsInterval: durationSchema.default(600),
    /** Random spread of each due time, as a share of the interval. */
    jitter: z.number().min(0).max(0.5).default(0.1),
    /** Share of the rate limit the scheduler plans to spend; the rest absorbs retries. */
    headroom: z.number().gt(0).max(1).default(0.9),
    /**
     * How intervals follow the budget: `activity` (projects with recent operations keep their
     * interval, idle ones stretch first) or `uniform` (every interval stretches by one factor).
     */
    strategy: z.enum(["activity", "uniform"]).default("activity"),
    /**
     * The longest a project waits between polls (activity strategy); `auto`: twice the interval
     * the uniform strategy would give every project.
     */
    maxInterval: z.union([z.literal("auto"), positiveDuration]).default("auto"),
    /** How long after its last new or changed operation a project counts as active. */
    activeWindow: positiveDuration.default(3600),
    firstPageLimit: z.number().int().min(1).max(1000).default(50),
    pageLimit: z.number().int().min(1).max(1000).default(500),
    /** Pages one poll reads before it commits and goes on in the next poll (catch-up). */
    maxPagesPerPoll: z.number().int().min(1).default(20),
    /** First start: how far back to look for open operations to follow. */
    firstStartLookback: durationSchema.default(3600),
    /** First start: count the operations created within this window (0 = off). */
    backfill: durationSchema.default(0),
    /** How long a failed operation is watched in case the service retries it. */
    watchFailed: durationSchema.default(1800),
    /**
     * How far into the future a record's `created_at` may lie (server clock skew); the
     * checkpoint never moves past now plus this.
     */
    futureTolerance: durationSchema.default(3600),
  })
  .strict();

const stuckSchema = z
  .object({
    /** How long an operation may stay open before it counts as stuck. */
    default: positiveDuration.default(900),
    /** Per-action thresholds. */
    actions: z.record(z.string(), positiveDuration).default({ start_compute: 120 }),
  })
  .strict();

const stateSchema = z
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

const projectIdSchema = z.string().regex(RESOURCE_ID_PATTERN, "not a project id");

/** Project ids to watch, or `all`: every project of the key's own account. */
const projectsSchema = z.union(
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
const accountSchema = z
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

const routeRuleSchema = z
  .object({
    projects: z.array(z.string()).min(1).optional(),
    actions: z.array(z.string()).min(1).optional(),
    statuses: z.array(z.string()).min(1).optional(),
    kinds: z.array(z.enum(ALERT_KINDS)).min(1).optional(),
  })
  .strict();

/** The environment variables a sink's secrets come from, by default. */
export const SINK_ENVIRONMENT = {
  slack: { url: "PGCP_SLACK_WEBHOOK_URL" },
  webhook: { url: "PGCP_WEBHOOK_URL", secret: "PGCP_WEBHOOK_SECRET" },
  pagerduty: { routingKey: "PGCP_PAGERDUTY_ROUTING_KEY" },
  alertmanager: { urls: "PGCP_ALERTMANAGER_URL" },
} as const;

/** PagerDuty's Events API v2 (EU accounts: https://events.eu.pagerduty.com/v2/enqueue). */
export const PAGERDUTY_EVENTS_URL = "https://events.pagerduty.com/v2/enqueue";

/** PagerDuty's severities, most severe first. */
export const PAGERDUTY_SEVERITIES = ["critical", "error", "warning", "info"] as const;
export type PagerDutySeverity = (typeof PAGERDUTY_SEVERITIES)[number];

const environmentVariable = z
  .string()
  .regex(/^[A-Z_][A-Z0-9_]*$/, "must be an environment variable name");

/** Labels an Alertmanager sink sets itself: static labels may not use these names. */
export const ALERTMANAGER_RESERVED_LABELS = [
  "alertname",
  "project_id",
  "branch_id",
  "endpoint_id",
  "action",
  "status",
  "operation_id",
  "severity",
] as const;

const labelValue = z.string().min(1, "must not be empty");

/** What every kind of sink has: its name, routing, grouping, age limit and timeout. */
const sinkCommon = {
  /** Names the sink in routing, metrics and logs. */
  name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, "must be lowercase letters, digits, - or _"),
  /** Alerts matching any of these are not sent (checked first). */
  drop: z.array(routeRuleSchema).default([]),
  /** When given, only alerts matching one of these are sent. */
  match: z.array(routeRuleSchema).default([]),
  /** Alerts of one project raised within this window travel in one message. */
  groupWindow: durationSchema.default(5),
  /** Alerts not delivered within this age are dead-lettered. */
  maxAge: positiveDuration.default(86_400),
  /** Deadline of one request (a PagerDuty batch makes one request per alert). */
  timeout: positiveDuration.default(10),
  /** Most alerts in one message (default: 50 for Slack, 100 for webhooks, 1 for PagerDuty). */
  maxBatch: z.number().int().min(1).max(1000).optional(),
  /**
   * The failures that make up a platform incident are not sent one by one to this sink (they
   * are still recorded, counted and shown): the incident's own alert tells of them.
   */
  holdIncidentAlerts: z.boolean().default(true),
};

/** Each kind's own settings (beside `kind` and the common ones). */
const SINK_KINDS = {
  slack: {
    /** Environment variable holding the incoming-webhook URL (secret: never in the file). */
    urlEnv: environmentVariable.optional(),
  },
  webhook: {
    /** Environment variable holding the URL (secret: never written in the file). */
    urlEnv: environmentVariable.optional(),
    /** Environment variable holding the HMAC signing secret. */
    secretEnv: environmentVariable.optional(),
    /** Extra request headers. */
    headers: z.record(z.string(), z.string()).default({}),
  },
  pagerduty: {
    /** Environment variable holding the integration's routing key (secret: never in the file). */
    routingKeyEnv: environmentVariable.optional(),
    /** The Events API v2 address: not a secret (EU accounts, tests). */
    url: z
      .url({ protocol: /^https?$/ })
      .refine((url) => !/^[a-z]+:\/\/[^/?#]*@/i.test(url), "must not carry credentials")
      .default(PAGERDUTY_EVENTS_URL),
    /** The incident's severity per alert kind (a recovery resolves, it has none). */
    severity: z
      .strictObject({
        operation_failed: z.enum(PAGERDUTY_SEVERITIES).default("critical"),
        operation_stuck: z.enum(PAGERDUTY_SEVERITIES).default("warning"),
        operation_retrying: z.enum(PAGERDUTY_SEVERITIES).default("info"),
        compute_advice: z.enum(PAGERDUTY_SEVERITIES).default("info"),
        platform_incident: z.enum(PAGERDUTY_SEVERITIES).default("critical"),
      })
      .prefault({}),
  },
  alertmanager: {
    /** The peers' base addresses (an HA pair: each gets every alert). Not secrets. */
    urls: z
      .array(z.url({ protocol: /^https?$/ }))
      .min(1)
      .optional(),
    /** Environment variable holding the peers' addresses, comma-separated, instead of `urls`. */
    urlsEnv: environmentVariable.optional(),
    /** Basic auth: environment variables holding the user name and the password. */
    usernameEnv: environmentVariable.optional(),
    passwordEnv: environmentVariable.optional(),
    /** Bearer auth: environment variable holding the token. */
    tokenEnv: environmentVariable.optional(),
    /** How often firing alerts are sent again (Alertmanager resolves what is not re-sent). */
    resendInterval: positiveDuration.default(60),
    /** A failure that is never retried fires this long, then is resolved. */
    failedFiringFor: positiveDuration.default(3_600),
    /** The `severity` label per alert kind (a recovery resolves, it has none). */
    severity: z
      .strictObject({
        operation_failed: labelValue.default("critical"),
        operation_stuck: labelValue.default("warning"),
        operation_retrying: labelValue.default("info"),
        compute_advice: labelValue.default("info"),
        platform_incident: labelValue.default("critical"),
      })
      .prefault({}),
    /** Static labels added to every alert (e.g. `team`). */
    labels: z
      .record(
        z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/, "must be a Prometheus label name"),
        labelValue,
      )
      .refine(
        (labels) =>
          !Object.keys(labels).some((k) =>
            (ALERTMANAGER_RESERVED_LABELS as readonly string[]).includes(k),
          ),
        `may not set ${ALERTMANAGER_RESERVED_LABELS.join(", ")}: the sink sets them`,
      )
      .default({}),
    /** The `runbook_url` annotation per alert kind. */
    runbookUrls: z
      .strictObject({
        operation_failed: z.url({ protocol: /^https?$/ }).optional(),
        operation_stuck: z.url({ protocol: /^https?$/ }).optional(),
        operation_retrying: z.url({ protocol: /^https?$/ }).optional(),
        compute_advice: z.url({ protocol: /^https?$/ }).optional(),
        platform_incident: z.url({ protocol: /^https?$/ }).optional(),
      })
      .default({}),
  },
} as const;
export type SinkKind = keyof typeof SINK_KINDS;
export const SINK_KINDS_LIST = Object.keys(SINK_KINDS) as SinkKind[];

/**
 * One kind's schema: strict, and a key of another kind is refused naming the kinds it
 * belongs to (`secretEnv is a setting of webhook sinks only`), so that no setting is silently
 * ignored on a sink it does not apply to.
 */
function sinkKindSchema<K extends SinkKind>(kind: K) {
  return z.strictObject(
    { kind: z.literal(kind), ...sinkCommon, ...SINK_KINDS[kind] },
    {
      error: (issue) => {
        if (issue.code !== "unrecognized_keys") return undefined;
        // A line per key, `key: why`, as every unknown-keys message (problems.ts).
        const known = [...Object.keys(sinkCommon), "kind", ...Object.keys(SINK_KINDS[kind])];
        return issue.keys
          .map((key) => {
            const owners = SINK_KINDS_LIST.filter((k) => key in SINK_KINDS[k]);
            return owners.length === 0
              ? `${key}: ${unknownKey(key, known, issue.path ?? [])}`
              : `${key}: is a setting of ${owners.join(" and ")} sinks only, not of ${kind} sinks`;
          })
          .join("\n");
      },
    },
  );
}

const sinkSchema = z.discriminatedUnion(
  "kind",
  [
    sinkKindSchema("slack"),
    sinkKindSchema("webhook"),
    sinkKindSchema("pagerduty"),
    sinkKindSchema("alertmanager"),
  ],
  { error: `must be one of ${SINK_KINDS_LIST.join(", ")}` },
);
export type SinkConfig = z.infer<typeof sinkSchema>;
export type SlackSinkConfig = Extract<SinkConfig, { kind: "slack" }>;
export type WebhookSinkConfig = Extract<SinkConfig, { kind: "webhook" }>;
export type PagerDutySinkConfig = Extract<SinkConfig, { kind: "pagerduty" }>;
export type AlertmanagerSinkConfig = Extract<SinkConfig, { kind: "alertmanager" }>;

/** A sink of `kind` named `name` with every default (the environment's shortcut sinks). */
export function defaultSink<K extends SinkKind>(
  kind: K,
  name: string = kind,
): Extract<SinkConfig, { kind: K }> {
  return sinkSchema.parse({ name, kind }) as Extract<SinkConfig, { kind: K }>;
}

const alertsSchema = z
  .object({
    /** Count a cancelled operation as failed (raise operation_failed). */
    cancelledIsFailure: z.boolean().default(false),
    /** Raise operation_retrying when failures_count grows. */
    retrying: z.boolean().default(false),
    /** Raise operation_recovered when a failed or stuck operation finishes. */
    recovered: z.boolean().default(true),
    /** Link in each alert: {project_id}, {operation_id}, {branch_id}, {endpoint_id}. */
    link: z.string().optional(),
    /**
     * The status page's address as people reach it (behind a proxy, an ingress): linked from the
     * alerts that can carry a link (PagerDuty incidents). None: no link.
     */
    statusPageUrl: z.url({ protocol: /^https?$/ }).optional(),
    /** Most alerts one project's outbox holds; newer ones are dropped and counted. */
    outboxLimit: z.number().int().min(1).default(10_000),
  })
  .strict();

const incidentsSchema = z
  .object({
    /** `false`: every failure is alerted on its own. */
    enabled: z.boolean().default(true),
    /**
     * Failures this close together group; an incident nothing joins for this long resolves. At
     * most an hour.
     */
    window: positiveDuration.refine((s) => s <= 3600, "must be at most 1h").default(600),
    /** Projects whose failures make an incident. */
    minProjects: z.number().int().min(2).max(10_000).default(5),
  })
  .strict();

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
    /** Address of the HTTP server (`/metrics`, `/healthz`, `/readyz`): `host:port` or `:port`. */
    listen: z
      .string()
      .regex(
        /^(\[[0-9a-fA-F:.]+\]|[^:\s]*):\d{1,5}$/,
        'must be "host:port" or ":port", for example "0.0.0.0:9700"',
      )
      .refine(
        (listen) => Number(listen.slice(listen.lastIndexOf(":") + 1)) <= 65_535,
        "the port must be 0..65535",
      )
      .default(":9642"),
    /** Who may reach the HTTP server: TLS and basic auth from a web configuration file. */
    web: z
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
      .default({ healthWithoutAuth: false }),
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
     * The status page at `/`: `full` (projects, failures, the outbox and dead letters, with ids
     * and error texts), `summary` (counts only), or `off` (no page).
     */
    /**
     * The compute probe (off by default): reads the file cache and connections of active
     * computes, never waking one and never keeping one awake (`computes-schema.ts`).
     */
    computes: computesSchema.prefault({}),
    status: z
      .object({ page: z.enum(["off", "summary", "full"]).default("full") })
      .strict()
      .default({ page: "full" }),
    metrics: z
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
      }),
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

/**
 * The compute probe reads only endpoints whose latest listing says they are active: it needs the
 * listings. Reads the input loosely, as `checkAccounts`.
 */
function checkComputeListings(
  config: {
    computes?: { enabled?: unknown };
    accounts?: unknown;
    poll?: { endpointsInterval?: unknown };
  },
  ctx: z.core.$RefinementCtx,
): void {
  const interval = config.poll?.endpointsInterval;
  const seconds = typeof interval === "string" ? parseDuration(interval) : interval;
  if (seconds !== 0) return;
  const accounts = Array.isArray(config.accounts) ? (config.accounts as unknown[]) : [];
  const accountOn = accounts.some(
    (a) => isRecord(a) && isRecord(a.computes) && a.computes.enabled === true,
  );
  if (config.computes?.enabled === true || accountOn) {
    ctx.addIssue({
      code: "custom",
      path: ["poll", "endpointsInterval"],
      message:
        "is 0, which turns the endpoint listings off: the compute probe reads only endpoints a listing says are active (give an interval, e.g. 10m)",
    });
  }
}

/** The archive needs the Postgres store. Reads the input loosely, as `checkAccounts`. */
function checkHistory(
  config: { history?: unknown; state?: { url?: unknown } },
  ctx: z.core.$RefinementCtx,
): void {
  if (config.history === "postgres" && config.state?.url === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["history"],
      message: "postgres needs the Postgres state store (set state.url or PGCP_STATE_URL)",
    });
  }
}

/**
 * Each sink a silence names that is not configured (with none configured, the sinks taken from
 * the environment). Read from the settings before validation, as `resolveConfig` checks them,
 * so that it is reported with every other problem, also of a silence that is wrong elsewhere.
 */
export function silenceSinkProblems(
  config: unknown,
): { readonly path: PropertyKey[]; readonly message: string }[] {
  const listed = isRecord(config) && Array.isArray(config.sinks) ? (config.sinks as unknown[]) : [];
  const names = listed.flatMap((sink) => {
    const name = isRecord(sink) ? sink.name : undefined;
    return typeof name === "string" ? [name] : [];
  });
  const sinkNames = new Set(listed.length > 0 ? names : Object.keys(SINK_ENVIRONMENT));
  const silences =
    isRecord(config) && Array.isArray(config.silences) ? (config.silences as unknown[]) : [];
  return silences.flatMap((silence, i) => {
    const sinks = isRecord(silence) && Array.isArray(silence.sinks) ? silence.sinks : [];
    return sinks.flatMap((name: unknown, j) =>
      typeof name === "string" && !sinkNames.has(name)
        ? [
            {
              path: ["silences", i, "sinks", j],
              message: `no sink is named ${name} (sinks: ${[...sinkNames].join(", ") || "none"})`,
            },
          ]
        : [],
    );
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Without `accounts`, the single-key settings make one account and are required; with it,
 * the projects belong in the accounts. Reads the input loosely: it may be invalid elsewhere.
 */
function checkAccounts(
  config: { api?: { key?: unknown }; projects?: unknown; accounts?: unknown },
  ctx: z.core.$RefinementCtx,
): void {
  if (config.accounts !== undefined) {
    if (config.projects !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["projects"],
        message: "is set with accounts: list each account's projects under accounts instead",
      });
    }
    return;
  }
  if (config.api?.key === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["api", "key"],
      message: "is required (set PGCP_API_KEY)",
    });
  }
  if (config.projects === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["projects"],
      message:
        "is required: a list of project ids, or all (set PGCP_PROJECTS or --projects), or accounts",
    });
  }
}

export type Config = z.infer<typeof configSchema>;
/** The configuration before defaults: what a file, the environment and flags may say. */
export type ConfigInput = z.input<typeof configSchema>;

/** A routing rule's lists (of `drop`, `match` and silences), for problems to say. */
const RULE_HINTS = (prefix: string): SettingHints => ({
  [`${prefix}.projects`]: { expects: "a list of project ids", example: "[my-project-123456]" },
  [`${prefix}.actions`]: { expects: "a list of actions", example: "[start_compute]" },
  [`${prefix}.statuses`]: { expects: "a list of statuses", example: "[failed]" },
  [`${prefix}.kinds`]: { expects: "a list of alert kinds", example: "[operation_failed]" },
});

const URL_HINT = (example: string): SettingHint => ({ expects: "an http(s) URL", example });
const CA_FILE_HINT: SettingHint = {
  expects: "a file's path (PEM certificates)",
  example: '"/etc/pgcp-exporter/compute-ca.pem"',
};
const VARIABLE_HINT = (example: string): SettingHint => ({
  expects: "the name of an environment variable",
  example,
});

/**
 * What the settings without a telling default expect, with an example, for problems to say
 * (`listen: must be a string "host:port", for example "0.0.0.0:9700"`). Keys are paths, `[]`
 * standing for a list's items; a setting with a default has its default as its example.
 */
export const CONFIG_HINTS: SettingHints = {
  listen: { expects: 'a string "host:port"', example: '"0.0.0.0:9700"' },
  "poll.maxInterval": { expects: "auto or a duration", example: '"30m"' },
  "state.url": { expects: "a postgres:// URL", example: '"postgres://pgcp@db.example.com/pgcp"' },
  "state.schema": { expects: "a schema name", example: "pgcp" },
  "web.configFile": { expects: "a file's path", example: '"/etc/pgcp-exporter/web.yml"' },
  "alerts.link": {
    expects: "a URL with placeholders",
    example: '"https://console.neon.tech/app/projects/{project_id}/operations"',
  },
  "alerts.statusPageUrl": URL_HINT('"https://pgcp-exporter.example.com/"'),
  "stuck.actions": {
    expects: "a mapping of actions to durations",
    example: "{start_compute: 2m}",
  },
  "stuck.actions.*": { example: '"2m"' },
  "metrics.include": {
    expects: "a list of metric family names",
    example: "[pgcp_operations_total]",
  },
  "metrics.exclude": {
    expects: "a list of metric family names",
    example: "[pgcp_operation_duration_seconds]",
  },
  accounts: {
    expects: "a list of accounts",
    example: "[{name: production, keyEnv: PGCP_PRODUCTION_KEY, projects: all}]",
  },
  "accounts[].name": { expects: "a name of letters, digits, _, . or -", example: "production" },
  "accounts[].keyEnv": VARIABLE_HINT("PGCP_PRODUCTION_KEY"),
  "accounts[].url": URL_HINT(`"${DEFAULT_API_URL}"`),
  "accounts[].requestsPerMinute": { example: "700" },
  "accounts[].burstPerSecond": { example: "40" },
  "accounts[].concurrency": { example: "8" },
  "accounts[].orgs": {
    expects: "a list of organisation ids",
    example: "[org-platform-team-12345678]",
  },
  "accounts[].computes": {
    expects: "a mapping of compute probe settings",
    example:
      "{userEnv: PGCP_PRODUCTION_COMPUTE_USER, passwordEnv: PGCP_PRODUCTION_COMPUTE_PASSWORD}",
  },
  "accounts[].computes.enabled": { example: "true" },
  "accounts[].computes.userEnv": VARIABLE_HINT("PGCP_PRODUCTION_COMPUTE_USER"),
  "accounts[].computes.passwordEnv": VARIABLE_HINT("PGCP_PRODUCTION_COMPUTE_PASSWORD"),
  "accounts[].computes.database": { expects: "a database name", example: "neondb" },
  "accounts[].computes.port": { expects: "a port number", example: "5432" },
  "accounts[].computes.caFile": CA_FILE_HINT,
  "computes.caFile": CA_FILE_HINT,
  "computes.ignoreUsers": { expects: "a list of role names", example: "[cloud_admin]" },
  "computes.ignoreApplications": {
    expects: "a list of application names (a trailing * matches any end)",
    example: '["nightly-report", "monitor-*"]',
  },
  sinks: { expects: "a list of sinks", example: "[{name: oncall, kind: slack}]" },
  "sinks[].name": { expects: "a name of lowercase letters, digits, - or _", example: "oncall" },
  "sinks[].drop": { expects: "a list of rules", example: "[{actions: [check_availability]}]" },
  "sinks[].match": { expects: "a list of rules", example: "[{kinds: [operation_failed]}]" },
  ...RULE_HINTS("sinks[].drop[]"),
  ...RULE_HINTS("sinks[].match[]"),
  "sinks[].maxBatch": { example: "50" },
  "sinks[].urlEnv": VARIABLE_HINT("PGCP_SLACK_WEBHOOK_URL"),
  "sinks[].secretEnv": VARIABLE_HINT("PGCP_WEBHOOK_SECRET"),
  "sinks[].routingKeyEnv": VARIABLE_HINT("PGCP_PAGERDUTY_ROUTING_KEY"),
  "sinks[].urlsEnv": VARIABLE_HINT("PGCP_ALERTMANAGER_URL"),
  "sinks[].usernameEnv": VARIABLE_HINT("ALERTMANAGER_USERNAME"),
  "sinks[].passwordEnv": VARIABLE_HINT("ALERTMANAGER_PASSWORD"),
  "sinks[].tokenEnv": VARIABLE_HINT("ALERTMANAGER_TOKEN"),
  "sinks[].headers": {
    expects: "a mapping of header names to values",
    example: "{X-Team: databases}",
  },
  "sinks[].headers.*": { expects: "a header value", example: '"databases"' },
  "sinks[].urls": { expects: "a list of http(s) URLs", example: "[http://alertmanager-0:9093]" },
  "sinks[].urls[]": URL_HINT('"http://alertmanager-0:9093"'),
  "sinks[].labels": { expects: "a mapping of label names to values", example: "{team: databases}" },
  "sinks[].labels.*": { expects: "a label value", example: '"databases"' },
  "sinks[].runbookUrls.operation_failed": URL_HINT('"https://runbooks.example.com/failed"'),
  "sinks[].runbookUrls.operation_stuck": URL_HINT('"https://runbooks.example.com/stuck"'),
  "sinks[].runbookUrls.operation_retrying": URL_HINT('"https://runbooks.example.com/retrying"'),
  "sinks[].runbookUrls.compute_advice": URL_HINT('"https://runbooks.example.com/compute-advice"'),
  "sinks[].runbookUrls.platform_incident": URL_HINT(
    '"https://runbooks.example.com/platform-incident"',
  ),
  silences: {
    expects: "a list of silences",
    example: '[{name: nightly, cron: "0 2 * * *", duration: 2h}]',
  },
  "silences[].name": {
    expects: "a name of lowercase letters, digits, - or _",
    example: "nightly-maintenance",
  },
  "silences[].comment": { expects: "a text", example: '"the nightly config push"' },
  ...RULE_HINTS("silences[]"),
  "silences[].sinks": { expects: "a list of sink names", example: "[oncall]" },
  "silences[].start": {
    expects: "an RFC 3339 date-time with an offset",
    example: '"2025-06-01T22:00:00+02:00"',
  },
  "silences[].end": {
    expects: "an RFC 3339 date-time with an offset",
    example: '"2025-06-02T02:00:00+02:00"',
  },
  "silences[].cron": {
    expects: "a five-field cron expression (minute hour day-of-month month day-of-week)",
    example: '"0 2 * * *"',
  },
  "silences[].duration": { example: '"2h"' },
  "silences[].timezone": { expects: "an IANA time zone name", example: "Europe/Berlin" },
};
