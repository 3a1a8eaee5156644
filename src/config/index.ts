/**
 * Configuration: the schema with its defaults, durations, and loading from YAML, environment
 * and command line with every problem listed by path in our own words (`problems.ts`), the
 * accounts' API keys, the sinks' secrets, the compute probe's connections (`computes.ts`), the
 * silences (and the cron expressions of recurring ones), the web configuration file, and what a
 * reload may change while running.
 */
export * from "./schema.js";
export * from "./duration.js";
export * from "./load.js";
export * from "./sinks.js";
export * from "./accounts.js";
export * from "./computes-schema.js";
export * from "./computes.js";
export * from "./secret-files.js";
export * from "./display-url.js";
export * from "./web-config.js";
export * from "./reload-plan.js";
export * from "./silences.js";
export * from "./cron.js";
export { closest } from "./closest.js";
export type { SettingHints } from "./problems.js";
export type { Settings } from "./settings.js";
