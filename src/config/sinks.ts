/**
 * Resolves the sinks' secrets (webhook URLs, signing secrets, PagerDuty routing keys) from the
 * environment. They never enter the configuration object, so nothing that logs or shows the
 * configuration can leak them; and no error message repeats their values.
 */
import { ConfigError } from "./load.js";
import type { Config } from "./schema.js";
import {
  defaultSink,
  SINK_ENVIRONMENT,
  SINK_KINDS_LIST,
  type AlertmanagerSinkConfig,
  type PagerDutySinkConfig,
  type SinkConfig,
  type SinkKind,
  type SlackSinkConfig,
  type WebhookSinkConfig,
} from "./sinks-schema.js";

/** A sink's configuration with the secrets it needs, by kind (`kind` is its config's). */
export type ResolvedSink =
  | {
      readonly kind: "slack";
      readonly config: SlackSinkConfig;
      /** The incoming-webhook URL: a secret. */
      readonly url: string;
    }
  | {
      readonly kind: "webhook";
      readonly config: WebhookSinkConfig;
      /** A secret. */
      readonly url: string;
      /** The HMAC signing secret, when one is set. */
      readonly secret: string | undefined;
    }
  | {
      readonly kind: "pagerduty";
      readonly config: PagerDutySinkConfig;
      /** The integration's routing key: a secret. */
      readonly routingKey: string;
    }
  | {
      readonly kind: "alertmanager";
      readonly config: AlertmanagerSinkConfig;
      /** The peers' base addresses. */
      readonly urls: readonly string[];
      readonly auth: SinkAuth | undefined;
    };

/** How a sink authenticates to its receiver (Alertmanager): from the environment. */
export type SinkAuth =
  | { readonly kind: "basic"; readonly username: string; readonly password: string }
  | { readonly kind: "bearer"; readonly token: string };

/** The variable whose presence makes a sink of each kind when no sink is configured. */
const SHORTCUT_VARIABLE: Readonly<Record<SinkKind, string>> = {
  slack: SINK_ENVIRONMENT.slack.url,
  webhook: SINK_ENVIRONMENT.webhook.url,
  pagerduty: SINK_ENVIRONMENT.pagerduty.routingKey,
  alertmanager: SINK_ENVIRONMENT.alertmanager.urls,
};

/**
 * The configured sinks with their secrets; with no sink configured, a sink of each kind whose
 * variable is set, named after its kind: `slack` (PGCP_SLACK_WEBHOOK_URL), `webhook`
 * (PGCP_WEBHOOK_URL), `pagerduty` (PGCP_PAGERDUTY_ROUTING_KEY).
 */
export function resolveSinks(config: Config, env: NodeJS.ProcessEnv): ResolvedSink[] {
  const sinks: SinkConfig[] =
    config.sinks.length > 0
      ? config.sinks
      : SINK_KINDS_LIST.filter((kind) => (env[SHORTCUT_VARIABLE[kind]] ?? "") !== "").map((kind) =>
          defaultSink(kind),
        );
  const problems: string[] = [];
  const resolved: ResolvedSink[] = [];
  sinks.forEach((sink, i) => {
    const found = resolveSink(sink, env);
    if (typeof found === "string") problems.push(`sinks[${i}].${found}`);
    else resolved.push(found);
  });
  if (problems.length > 0) throw new ConfigError("environment", problems);
  return resolved;
}

/** The sink with its secrets, or a problem (`urlEnv: …`) naming a variable, never a value. */
function resolveSink(sink: SinkConfig, env: NodeJS.ProcessEnv): ResolvedSink | string {
  if (sink.kind === "pagerduty") {
    const routingKeyEnv = sink.routingKeyEnv ?? SINK_ENVIRONMENT.pagerduty.routingKey;
    const routingKey = env[routingKeyEnv] ?? "";
    if (routingKey === "") return `routingKeyEnv: environment variable ${routingKeyEnv} is not set`;
    if (!/^\S+$/.test(routingKey)) {
      return `routingKeyEnv: ${routingKeyEnv} holds blanks (a routing key has none)`;
    }
    return { kind: "pagerduty", config: sink, routingKey };
  }
  if (sink.kind === "alertmanager") return resolveAlertmanager(sink, env);
  const urlEnv = sink.urlEnv ?? SINK_ENVIRONMENT[sink.kind].url;
  const url = env[urlEnv] ?? "";
  if (url === "") return `urlEnv: environment variable ${urlEnv} is not set`;
  if (!isHttpUrl(url)) return `urlEnv: ${urlEnv} does not hold an http(s) URL`;
  if (sink.kind === "slack") return { kind: "slack", config: sink, url };
  const secretEnv = sink.secretEnv ?? SINK_ENVIRONMENT.webhook.secret;
  const secret = env[secretEnv] === "" ? undefined : env[secretEnv];
  if (sink.secretEnv !== undefined && secret === undefined) {
    return `secretEnv: environment variable ${secretEnv} is not set`;
  }
  return { kind: "webhook", config: sink, url, secret };
}

/**
 * Every secret value a resolved sink holds, for the places that show text from outside (the
 * status page) to remove as a last line of defence: a Slack or webhook URL (whole, and its path
 * and query), a signing secret, custom header values, a routing key.
 */
export function sinkSecrets(sink: ResolvedSink): string[] {
  switch (sink.kind) {
    case "slack":
      return urlSecrets(sink.url);
    case "webhook":
      return [
        ...urlSecrets(sink.url),
        ...(sink.secret === undefined ? [] : [sink.secret]),
        ...Object.values(sink.config.headers),
      ];
    case "pagerduty":
      return [sink.routingKey];
    case "alertmanager":
      if (sink.auth === undefined) return [];
      return sink.auth.kind === "basic" ? [sink.auth.password] : [sink.auth.token];
  }
}

/** A secret URL, whole and its path and query. */
function urlSecrets(url: string): string[] {
  try {
    const parsed = new URL(url);
    return [url, parsed.pathname + parsed.search];
  } catch {
    return [url];
  }
}

/** An Alertmanager sink's peers (from `urls`, or its variable) and its credentials. */
function resolveAlertmanager(
  sink: AlertmanagerSinkConfig,
  env: NodeJS.ProcessEnv,
): ResolvedSink | string {
  let urls: string[];
  if (sink.urls !== undefined) {
    if (sink.urlsEnv !== undefined)
      return "urlsEnv: give the peers in urls or in urlsEnv, not both";
    urls = sink.urls;
  } else {
    const urlsEnv = sink.urlsEnv ?? SINK_ENVIRONMENT.alertmanager.urls;
    urls = (env[urlsEnv] ?? "")
      .split(",")
      .map((u) => u.trim())
      .filter((u) => u !== "");
    if (urls.length === 0) return `urlsEnv: environment variable ${urlsEnv} is not set`;
    if (!urls.every(isHttpUrl))
      return `urlsEnv: ${urlsEnv} holds something other than http(s) URLs`;
  }
  if (urls.some((u) => new URL(u).username !== "" || new URL(u).password !== "")) {
    return "urls: a peer's address may not carry credentials (use usernameEnv and passwordEnv)";
  }
  const missing = (["usernameEnv", "passwordEnv", "tokenEnv"] as const).find((key) => {
    const name = sink[key];
    return name !== undefined && (env[name] ?? "") === "";
  });
  if (missing !== undefined) {
    return `${missing}: environment variable ${String(sink[missing])} is not set`;
  }
  const value = (name: string | undefined) => (name === undefined ? undefined : env[name]);
  const username = value(sink.usernameEnv);
  const password = value(sink.passwordEnv);
  const token = value(sink.tokenEnv);
  if ((username === undefined) !== (password === undefined)) {
    return "usernameEnv: basic auth needs both usernameEnv and passwordEnv";
  }
  if (token !== undefined && username !== undefined) {
    return "tokenEnv: use basic auth or a bearer token, not both";
  }
  const auth: SinkAuth | undefined =
    token !== undefined
      ? { kind: "bearer", token }
      : username !== undefined && password !== undefined
        ? { kind: "basic", username, password }
        : undefined;
  return { kind: "alertmanager", config: sink, urls, auth };
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:";
  } catch {
    return false;
  }
}
