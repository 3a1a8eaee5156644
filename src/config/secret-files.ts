/**
 * Secrets come from the environment only, never from the configuration file. Each secret
 * variable may instead name a file that holds the value (`PGCP_API_KEY_FILE=/run/secrets/key`),
 * as Docker and Kubernetes mount secrets. Errors name variables and paths, never a value.
 */
import { readFileSync } from "node:fs";
import { ConfigError, type RawConfig } from "./load.js";
import type { Config } from "./schema.js";
import { OTLP_HEADER_VARIABLES } from "./otlp-schema.js";
import { SINK_ENVIRONMENT } from "./sinks-schema.js";

/** The secret variables the configuration itself reads (sinks may name more). */
export const SECRET_VARIABLES: readonly string[] = [
  "PGCP_API_KEY",
  "PGCP_STATE_URL",
  SINK_ENVIRONMENT.slack.url,
  SINK_ENVIRONMENT.webhook.url,
  SINK_ENVIRONMENT.webhook.secret,
  SINK_ENVIRONMENT.pagerduty.routingKey,
  SINK_ENVIRONMENT.alertmanager.urls,
  ...Object.values(OTLP_HEADER_VARIABLES),
];

/**
 * The variables the configured sinks read their secrets from (URL, signing secret, routing key).
 */
export function sinkVariables(config: Config): string[] {
  return config.sinks.flatMap((s) => {
    switch (s.kind) {
      case "slack":
        return [s.urlEnv ?? SINK_ENVIRONMENT.slack.url];
      case "webhook":
        return [
          s.urlEnv ?? SINK_ENVIRONMENT.webhook.url,
          s.secretEnv ?? SINK_ENVIRONMENT.webhook.secret,
        ];
      case "pagerduty":
        return [s.routingKeyEnv ?? SINK_ENVIRONMENT.pagerduty.routingKey];
      case "alertmanager":
        return [
          ...(s.urls === undefined ? [s.urlsEnv ?? SINK_ENVIRONMENT.alertmanager.urls] : []),
          ...[s.usernameEnv, s.passwordEnv, s.tokenEnv].filter((v) => v !== undefined),
        ];
    }
  });
}

/**
 * `env` with each `<NAME>_FILE` of `names` read into `<NAME>` (one trailing newline dropped).
 * Setting both, or a file that cannot be read or is empty, is a configuration error.
 */
export function readSecretFiles(
  env: NodeJS.ProcessEnv,
  names: readonly string[],
): NodeJS.ProcessEnv {
  const read = secretFiles(env, names);
  if (read.problems.length > 0) throw new ConfigError("environment", read.problems);
  return read.env;
}

/**
 * As `readSecretFiles`, with its problems returned rather than thrown, and the variables they
 * are about (`failed`): what depends on those can be left unreported, as said once already.
 */
export function secretFiles(
  env: NodeJS.ProcessEnv,
  names: readonly string[],
): { env: NodeJS.ProcessEnv; problems: string[]; failed: string[] } {
  const out: NodeJS.ProcessEnv = { ...env };
  const problems: string[] = [];
  const failed: string[] = [];
  const fail = (name: string, problem: string) => {
    problems.push(problem);
    failed.push(name);
  };
  for (const name of new Set(names)) {
    const file = env[`${name}_FILE`];
    if (file === undefined || file === "") continue;
    if ((env[name] ?? "") !== "") {
      fail(name, `${name}: set ${name} or ${name}_FILE, not both`);
      continue;
    }
    let value: string;
    try {
      value = readFileSync(file, "utf8").replace(/\r?\n$/, "");
    } catch (cause) {
      const code = (cause as NodeJS.ErrnoException).code ?? "error";
      fail(name, `${name}_FILE: cannot read ${file} (${code})`);
      continue;
    }
    if (value === "") fail(name, `${name}_FILE: ${file} is empty`);
    else out[name] = value;
  }
  return { env: out, problems, failed };
}

/** Secrets written in the configuration file: refused, with where they belong instead. */
export function secretsInFile(file: RawConfig): string[] {
  const problems: string[] = [];
  const api = file.api;
  if (typeof api === "object" && api !== null && "key" in api) {
    problems.push(
      "api.key: a secret is not read from the file: set PGCP_API_KEY (or PGCP_API_KEY_FILE)",
    );
  }
  const accounts = Array.isArray(file.accounts) ? (file.accounts as unknown[]) : [];
  accounts.forEach((account, i) => {
    if (typeof account === "object" && account !== null && "key" in account) {
      problems.push(
        `accounts[${i}].key: a secret is not read from the file: name an environment variable in keyEnv`,
      );
    }
  });
  const computePassword = (section: unknown, path: string) => {
    if (typeof section === "object" && section !== null && "password" in section) {
      problems.push(
        `${path}.password: a secret is not read from the file: name an environment variable in passwordEnv`,
      );
    }
  };
  computePassword(file.computes, "computes");
  accounts.forEach((account, i) => {
    if (typeof account === "object" && account !== null && "computes" in account) {
      computePassword(account.computes, `accounts[${i}].computes`);
    }
  });
  const sinks = Array.isArray(file.sinks) ? (file.sinks as unknown[]) : [];
  sinks.forEach((sink, i) => {
    if (typeof sink !== "object" || sink === null) return;
    // PagerDuty's events URL is no secret (its routing key is); every other sink's URL is one.
    const pagerduty = "kind" in sink && sink.kind === "pagerduty";
    for (const key of pagerduty ? ["routingKey"] : ["url", "secret"]) {
      if (key in sink) {
        problems.push(
          `sinks[${i}].${key}: a secret is not read from the file: name an environment variable in ${key}Env`,
        );
      }
    }
  });
  const otlp = file.otlp;
  if (typeof otlp === "object" && otlp !== null && "headers" in otlp) {
    problems.push(
      `otlp.headers: a secret is not read from the file: set ${OTLP_HEADER_VARIABLES.all} (or ${OTLP_HEADER_VARIABLES.all}_FILE)`,
    );
  }
  return problems;
}
