/**
 * Configuration: the schema with its defaults, a module a section (`*-schema.ts`) composed in
 * `schema.ts` with the checks across sections (`cross-checks.ts`), durations, and loading from
 * YAML, environment and command line with every problem listed by path in our own words
 * (`problems.ts`, with what each setting expects from `setting-hints.ts`), the accounts' API
 * keys, the sinks' secrets, the compute probe's connections (`computes.ts`), the OpenTelemetry export's targets
 * (`otlp.ts`), the redaction of secrets from what is shown (`redact.ts`), the silences (and
 * the cron expressions of recurring ones), the web configuration file, and what a reload may
 * change while running.
 */
export { configSchema, type Config, type ConfigInput } from "./schema.js";
export {
  ACCOUNT_NAME_PATTERN,
  DEFAULT_ACCOUNT,
  DEFAULT_API_URL,
  type AccountConfig,
} from "./accounts-schema.js";
export { DEFAULT_DETAIL, DETAIL_LEVELS, type DetailLevel } from "./server-schema.js";
export {
  ALERTMANAGER_RESERVED_LABELS,
  defaultSink,
  PAGERDUTY_EVENTS_URL,
  PAGERDUTY_SEVERITIES,
  SINK_ENVIRONMENT,
  SINK_KINDS_LIST,
  type AlertmanagerSinkConfig,
  type PagerDutySeverity,
  type PagerDutySinkConfig,
  type SinkConfig,
  type SinkKind,
  type SlackSinkConfig,
  type WebhookSinkConfig,
} from "./sinks-schema.js";
export { silenceSinkProblems } from "./cross-checks.js";
export { CONFIG_HINTS } from "./setting-hints.js";
export { durationInput, durationSchema, parseDuration } from "./duration.js";
export * from "./load.js";
export * from "./sinks.js";
export * from "./accounts.js";
export * from "./computes-schema.js";
export * from "./otlp-schema.js";
export * from "./otlp.js";
export * from "./computes.js";
export * from "./secret-files.js";
export * from "./display-url.js";
export * from "./redact.js";
export * from "./web-config.js";
export * from "./reload-plan.js";
export * from "./silences.js";
export * from "./cron.js";
export { closest } from "./closest.js";
export type { SettingHints } from "./problems.js";
export type { Settings } from "./settings.js";
