/**
 * Resolves the sinks' secrets (webhook URLs, signing secrets, PagerDuty routing keys) from the
 * environment. They never enter the configuration object, so nothing that logs or shows the
 * configuration can leak them; and no error message repeats their values.
 */
import { ConfigError } from "./load.js";
import {
  defaultSink,
  SINK_ENVIRONMENT,
  SINK_KINDS_LIST,
  type Config,
  type SinkConfig,
  type SinkKind,
} from "./schema.js";

export interface ResolvedSink {
  readonly config: SinkConfig;
  /**
   * Where the sink posts: a Slack or webhook URL (a secret, from the environment), or PagerDuty's
   * events URL (not one: from the configuration).
   */
  readonly url: string;
  /** The webhook's HMAC signing secret, when one is set. */
  readonly secret: string | undefined;
  /** A pagerduty sink's routing (integration) key: a secret. */
  readonly routingKey?: string | undefined;
}

/** The variable whose presence makes a sink of each kind when no sink is configured. */
const SHORTCUT_VARIABLE: Readonly<Record<SinkKind, string>> = {
  slack: SINK_ENVIRONMENT.slack.url,
  webhook: SINK_ENVIRONMENT.webhook.url,
  pagerduty: SINK_ENVIRONMENT.pagerduty.routingKey,
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
    return { config: sink, url: sink.url, secret: undefined, routingKey };
  }
  const urlEnv = sink.urlEnv ?? SINK_ENVIRONMENT[sink.kind].url;
  const url = env[urlEnv] ?? "";
  if (url === "") return `urlEnv: environment variable ${urlEnv} is not set`;
  if (!isHttpUrl(url)) return `urlEnv: ${urlEnv} does not hold an http(s) URL`;
  if (sink.kind === "slack") return { config: sink, url, secret: undefined };
  const secretEnv = sink.secretEnv ?? SINK_ENVIRONMENT.webhook.secret;
  const secret = env[secretEnv] === "" ? undefined : env[secretEnv];
  if (sink.secretEnv !== undefined && secret === undefined) {
    return `secretEnv: environment variable ${secretEnv} is not set`;
  }
  return { config: sink, url, secret };
}

/**
 * Every secret value a resolved sink holds, for the places that show text from outside (the
 * status page) to remove as a last line of defence: a Slack or webhook URL (whole, and its path
 * and query), a signing secret, custom header values, a routing key.
 */
export function sinkSecrets(sink: ResolvedSink): string[] {
  const out: string[] = [];
  if (sink.config.kind !== "pagerduty") {
    out.push(sink.url);
    try {
      const url = new URL(sink.url);
      out.push(url.pathname + url.search);
    } catch {
      // Not a URL: the whole value is listed already.
    }
  }
  if (sink.config.kind === "webhook") out.push(...Object.values(sink.config.headers));
  if (sink.secret !== undefined) out.push(sink.secret);
  if (sink.routingKey !== undefined) out.push(sink.routingKey);
  return out;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:";
  } catch {
    return false;
  }
}
