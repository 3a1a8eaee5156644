/**
 * What the settings expect, with an example of each, for the configuration's problems to say
 * (`problems.ts`).
 */
import { DEFAULT_API_URL } from "./accounts-schema.js";
import type { SettingHint, SettingHints } from "./problems.js";

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
  "otlp.endpoint": URL_HINT('"http://otel-collector:4318"'),
  "otlp.traces.endpoint": URL_HINT('"http://otel-collector:4318/v1/traces"'),
  "otlp.metrics.endpoint": URL_HINT('"http://otel-collector:4318/v1/metrics"'),
  "otlp.resourceAttributes": {
    expects: "a mapping of attribute names to values",
    example: "{deployment.environment.name: production}",
  },
  "otlp.resourceAttributes.*": { example: '"production"' },
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
