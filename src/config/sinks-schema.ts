/**
 * `sinks:` in the configuration: where alerts go (Slack, webhook, PagerDuty, Alertmanager),
 * each sink with its routing rules, grouping, age limit and its kind's own settings. A key of
 * another kind is refused naming the kinds it belongs to. The secrets come from the environment
 * (`sinks.ts`).
 */
import { z } from "zod";
import { ALERT_KINDS } from "../store/index.js";
import { durationSchema, positiveDuration } from "./duration.js";
import { unknownKey } from "./problems.js";

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

export const sinkSchema = z.discriminatedUnion(
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
