/**
 * Resolves the sinks' secrets (webhook URLs, signing secrets) from the environment. They never
 * enter the configuration object, so nothing that logs or shows the configuration can leak
 * them; and no error message repeats their values.
 */
import { ConfigError } from "./load.js";
import { SINK_ENVIRONMENT, type Config, type SinkConfig } from "./schema.js";

export interface ResolvedSink {
  readonly config: SinkConfig;
  readonly url: string;
  /** The webhook's HMAC signing secret, when one is set. */
  readonly secret: string | undefined;
}

/**
 * The configured sinks with their secrets; with no sink configured, a `slack` sink when
 * PGCP_SLACK_WEBHOOK_URL is set and a `webhook` sink when PGCP_WEBHOOK_URL is set.
 */
export function resolveSinks(config: Config, env: NodeJS.ProcessEnv): ResolvedSink[] {
  const sinks: SinkConfig[] =
    config.sinks.length > 0
      ? config.sinks
      : (["slack", "webhook"] as const)
          .filter((kind) => (env[SINK_ENVIRONMENT[kind].url] ?? "") !== "")
          .map((kind) => ({
            name: kind,
            kind,
            headers: {},
            drop: [],
            match: [],
            groupWindow: 5,
            maxAge: 86_400,
            timeout: 10,
          }));
  const problems: string[] = [];
  const resolved: ResolvedSink[] = [];
  sinks.forEach((sink, i) => {
    const urlEnv = sink.urlEnv ?? SINK_ENVIRONMENT[sink.kind].url;
    const url = env[urlEnv] ?? "";
    if (url === "") {
      problems.push(`sinks[${i}].urlEnv: environment variable ${urlEnv} is not set`);
      return;
    }
    if (!isHttpUrl(url)) {
      problems.push(`sinks[${i}].urlEnv: ${urlEnv} does not hold an http(s) URL`);
      return;
    }
    let secret: string | undefined;
    if (sink.kind === "webhook") {
      const secretEnv = sink.secretEnv ?? SINK_ENVIRONMENT.webhook.secret;
      secret = env[secretEnv] === "" ? undefined : env[secretEnv];
      if (sink.secretEnv !== undefined && secret === undefined) {
        problems.push(`sinks[${i}].secretEnv: environment variable ${secretEnv} is not set`);
        return;
      }
    } else if (sink.secretEnv !== undefined) {
      problems.push(`sinks[${i}].secretEnv: only webhook sinks are signed`);
      return;
    }
    resolved.push({ config: sink, url, secret });
  });
  if (problems.length > 0) throw new ConfigError("environment", problems);
  return resolved;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:";
  } catch {
    return false;
  }
}
