/**
 * The configuration flags shared by `run` and `check-config`, and loading the configuration
 * from them: file, environment, then flags. Problems are printed by path, never as a stack.
 */
import { parseArgs } from "node:util";
import {
  ConfigError,
  loadConfig,
  parseProjectList,
  readSecretFiles,
  resolveAccounts,
  accountVariables,
  resolveSinks,
  sinkVariables,
  SECRET_VARIABLES,
  type RawConfig,
  loadWebConfig,
  type Settings,
} from "../config/index.js";

export const CONFIG_FLAGS_HELP = `  --config FILE        YAML configuration file (see config/pgcp-exporter.example.yaml)
  --api-url URL        API base address (env PGCP_API_URL; default the real API)
  --projects LIST      comma-separated project ids, or "all" (env PGCP_PROJECTS)
  --state-dir DIR      where project state files live (env PGCP_STATE_DIR; default ./state)
  --listen ADDR        host:port or :port of the HTTP server (env PGCP_LISTEN; default :9642)
  --web.config.file FILE
                       TLS and basic auth for the HTTP server, in the Prometheus exporters'
                       web configuration format (env PGCP_WEB_CONFIG_FILE; default none)
  --poll-interval SEC  base poll interval (env PGCP_POLL_INTERVAL; default 30)
  --log-level LEVEL    trace, debug, info, warn, error (env PGCP_LOG_LEVEL; default info)
  --log-format FORMAT  json, pretty, or auto (pretty in a terminal; the default)

Secrets are read from the environment only: PGCP_API_KEY, PGCP_SLACK_WEBHOOK_URL,
PGCP_WEBHOOK_URL, PGCP_WEBHOOK_SECRET, PGCP_PAGERDUTY_ROUTING_KEY.
Precedence: configuration file, then environment variables, then flags.`;

const CONFIG_FLAGS = {
  config: { type: "string" },
  "api-url": { type: "string" },
  projects: { type: "string" },
  "state-dir": { type: "string" },
  listen: { type: "string" },
  "web.config.file": { type: "string" },
  "poll-interval": { type: "string" },
  "log-level": { type: "string" },
  "log-format": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

type FlagValues = Partial<Record<string, string | boolean>>;

/** The flag that sets a setting (a path of the configuration), for problems to name. */
const FLAG_FOR: Readonly<Record<string, string>> = {
  "api.url": "--api-url",
  projects: "--projects",
  "state.dir": "--state-dir",
  listen: "--listen",
  "web.configFile": "--web.config.file",
  "poll.interval": "--poll-interval",
  "log.level": "--log-level",
  "log.format": "--log-format",
};

function flagFor(path: readonly PropertyKey[]): string | undefined {
  for (let n = path.length; n > 0; n--) {
    const flag = FLAG_FOR[path.slice(0, n).map(String).join(".")];
    if (flag !== undefined) return flag;
  }
  return undefined;
}

/** Command-line flags as a configuration layer. */
function overridesFrom(values: FlagValues): RawConfig {
  const out: RawConfig = {};
  if (typeof values["api-url"] === "string") out.api = { url: values["api-url"] };
  if (typeof values.projects === "string") out.projects = parseProjectList(values.projects);
  if (typeof values["state-dir"] === "string") out.state = { dir: values["state-dir"] };
  if (typeof values.listen === "string") out.listen = values.listen;
  if (typeof values["web.config.file"] === "string") {
    out.web = { configFile: values["web.config.file"] };
  }
  if (typeof values["poll-interval"] === "string") {
    out.poll = { interval: values["poll-interval"] };
  }
  const log: RawConfig = {};
  if (typeof values["log-level"] === "string") log.level = values["log-level"];
  if (typeof values["log-format"] === "string") log.format = values["log-format"];
  if (Object.keys(log).length > 0) out.log = log;
  return out;
}

export type LoadedFromArgs =
  | (Settings & {
      readonly kind: "loaded";
      readonly flags: FlagValues;
      /** Reads the settings again from the same flags, as they stand now (SIGHUP). */
      readonly reload: () => Promise<Settings>;
    })
  | { readonly kind: "exit"; readonly code: number };

/**
 * Parses the command line (the configuration flags plus `extra` boolean flags), loads and
 * validates the configuration, the sinks' secrets and the web configuration. Prints usage or
 * problems and answers an exit code when it cannot.
 */
export async function loadFromArgs(
  command: string,
  help: string,
  argv: string[],
  extra: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): Promise<LoadedFromArgs> {
  let values: FlagValues;
  try {
    const options = {
      ...CONFIG_FLAGS,
      ...Object.fromEntries(extra.map((name) => [name, { type: "boolean" as const }])),
    };
    ({ values } = parseArgs({ args: argv, options, strict: true }));
  } catch (error) {
    process.stderr.write(`pgcp-exporter ${command}: ${(error as Error).message}\n\n${help}\n`);
    return { kind: "exit", code: 2 };
  }
  if (values.help === true) {
    process.stdout.write(help + "\n");
    return { kind: "exit", code: 0 };
  }
  const reload = () => loadSettings(values, env);
  try {
    return { kind: "loaded", ...(await reload()), flags: values, reload };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`pgcp-exporter: ${error.message}\n`);
    return { kind: "exit", code: 2 };
  }
}

/** The settings the flags and `env` give; a ConfigError lists every problem. */
async function loadSettings(values: FlagValues, env: NodeJS.ProcessEnv): Promise<Settings> {
  const file = typeof values.config === "string" ? values.config : undefined;
  // A secret may come from a file a variable names (PGCP_API_KEY_FILE), as mounted secrets do.
  const withSecrets = readSecretFiles(env, SECRET_VARIABLES);
  const config = await loadConfig({
    file,
    env: withSecrets,
    overrides: overridesFrom(values),
    overrideOrigin: flagFor,
  });
  const accounts = resolveAccounts(config, readSecretFiles(withSecrets, accountVariables(config)));
  const sinks = resolveSinks(config, readSecretFiles(withSecrets, sinkVariables(config)));
  const web =
    config.web.configFile === undefined ? undefined : await loadWebConfig(config.web.configFile);
  return { config, accounts, sinks, web };
}
