/**
 * The configuration flags shared by `run` and `check-config`, and loading the configuration
 * from them: file, environment, then flags. Every problem is printed at once, by path, never
 * as a stack: the file's settings, the secrets, the web configuration file and (for
 * `check-config`) the state directory and the metric families named by `metrics.include` and
 * `metrics.exclude` are all checked before any is reported.
 */
import { parseArgs } from "node:util";
import {
  ConfigError,
  loadConfig,
  parseProjectList,
  resolveAccounts,
  accountVariables,
  computeVariables,
  resolveComputes,
  resolveOtlp,
  resolveSinks,
  secretFiles,
  sinkVariables,
  SECRET_VARIABLES,
  configSchema,
  type Config,
  type RawConfig,
  loadWebConfig,
  type Settings,
} from "../config/index.js";
import { metricListProblems } from "../metrics/index.js";
import { stateDirectoryProblem } from "../store/index.js";
import { flagProblem, usageProblems } from "./usage.js";

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
PGCP_WEBHOOK_URL, PGCP_WEBHOOK_SECRET, PGCP_PAGERDUTY_ROUTING_KEY, PGCP_COMPUTE_PASSWORD.
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

/** What `loadFromArgs` checks besides the configuration itself. */
export interface LoadChecks {
  /** Also check that the state directory can be written, or made (leaving nothing behind). */
  readonly stateDir?: boolean;
  /** Also check that `metrics.include` and `metrics.exclude` name families that are served. */
  readonly metricNames?: boolean;
}

/**
 * Parses the command line (the configuration flags plus `extra` boolean flags), loads and
 * validates the configuration, the sinks' secrets and the web configuration. Prints what is
 * wrong and answers an exit code when it cannot: a flag's problem in one line (and where to
 * read the usage), the configuration's every problem at once.
 */
export async function loadFromArgs(
  command: string,
  help: string,
  argv: string[],
  extra: readonly string[] = [],
  checks: LoadChecks = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<LoadedFromArgs> {
  let values: FlagValues;
  const options = {
    ...CONFIG_FLAGS,
    ...Object.fromEntries(extra.map((name) => [name, { type: "boolean" as const }])),
  };
  try {
    ({ values } = parseArgs({ args: argv, options, strict: true }));
  } catch (error) {
    process.stderr.write(usageProblems(command, [flagProblem(error, Object.keys(options))]));
    return { kind: "exit", code: 2 };
  }
  if (values.help === true) {
    process.stdout.write(help + "\n");
    return { kind: "exit", code: 0 };
  }
  const reload = () => loadSettings(values, env, {});
  try {
    return { kind: "loaded", ...(await loadSettings(values, env, checks)), flags: values, reload };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`pgcp-exporter: ${error.message}\n`);
    return { kind: "exit", code: 2 };
  }
}

/**
 * The settings the flags and `env` give; a ConfigError lists every problem found in the file,
 * the environment, the secrets' files and the web configuration file, each said once.
 */
async function loadSettings(
  values: FlagValues,
  env: NodeJS.ProcessEnv,
  checks: LoadChecks,
): Promise<Settings> {
  const file = typeof values.config === "string" ? values.config : undefined;
  const errors: ConfigError[] = [];
  // A variable whose secret file failed is reported once: what needs it is not reported again.
  const failed: string[] = [];
  // A secret may come from a file a variable names (PGCP_API_KEY_FILE), as mounted secrets do.
  const readSecrets = (from: NodeJS.ProcessEnv, names: readonly string[]) => {
    const read = secretFiles(from, names);
    if (read.problems.length > 0) errors.push(new ConfigError("environment", read.problems));
    failed.push(...read.failed);
    return read.env;
  };
  const withSecrets = readSecrets(env, SECRET_VARIABLES);
  const source = file ?? "environment and flags";
  let config: Config | undefined;
  let input: RawConfig | undefined;
  try {
    config = await loadConfig({
      file,
      env: withSecrets,
      overrides: overridesFrom(values),
      overrideOrigin: flagFor,
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    errors.push(error);
    input = error.input;
  }
  const attempt = async <T>(step: () => T | Promise<T>): Promise<T | undefined> => {
    try {
      return await step();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      errors.push(error);
      return undefined;
    }
  };
  // Checked also when other settings are wrong, so that every problem is listed at once.
  const webFile = config?.web.configFile ?? stringAt(input, ["web", "configFile"]);
  const web = webFile === undefined ? undefined : await attempt(() => loadWebConfig(webFile));
  const stateDir = stateDirOf(config, input);
  if (checks.stateDir === true && stateDir !== undefined) {
    const problem = await stateDirectoryProblem(stateDir, { keep: false });
    if (problem !== undefined) {
      errors.push(new ConfigError(source, [`state.dir: ${problem}`]));
    }
  }
  if (checks.metricNames === true) {
    const metrics = config?.metrics ?? configSchema.shape.metrics.safeParse(input?.metrics).data;
    const problems = (metrics === undefined ? [] : metricListProblems(metrics)).map(
      (p) => `metrics.${p.list}: ${p.text}`,
    );
    if (problems.length > 0) errors.push(new ConfigError(source, problems));
  }
  if (config === undefined) throw combined(errors, failed);
  const valid = config;
  // The names the sinks and accounts read that the first pass has not read already.
  const more = (names: readonly string[]) => names.filter((n) => !SECRET_VARIABLES.includes(n));
  const accounts = await attempt(() =>
    resolveAccounts(valid, readSecrets(withSecrets, more(accountVariables(valid)))),
  );
  const sinks = await attempt(() =>
    resolveSinks(valid, readSecrets(withSecrets, more(sinkVariables(valid)))),
  );
  const computes = await attempt(() =>
    resolveComputes(valid, readSecrets(withSecrets, more(computeVariables(valid)))),
  );
  const otlp = await attempt(() => resolveOtlp(valid, withSecrets));
  if (
    errors.length > 0 ||
    accounts === undefined ||
    sinks === undefined ||
    computes === undefined ||
    otlp === undefined
  ) {
    throw combined(errors, failed);
  }
  return { config: valid, accounts, sinks, web, computes, otlp };
}

/**
 * Every problem of `errors` in one error, less those that name a variable whose secret file
 * has been reported as failed (`PGCP_API_KEY_FILE: cannot read …` says it all).
 */
function combined(errors: readonly ConfigError[], failed: readonly string[]): ConfigError {
  const isEcho = (problem: string) =>
    failed.some((name) => problem.includes(name)) &&
    !failed.some((name) => problem.startsWith(`${name}: `) || problem.startsWith(`${name}_FILE: `));
  return ConfigError.combine(
    errors.map(
      (error) =>
        new ConfigError(
          error.sections.map((s) => ({
            source: s.source,
            problems: s.problems.filter((p) => !isEcho(p)),
          })),
        ),
    ),
  );
}

/** The file store's directory, as far as the settings tell (none for the Postgres store). */
function stateDirOf(config: Config | undefined, input: RawConfig | undefined): string | undefined {
  if (config !== undefined) return config.state.url === undefined ? config.state.dir : undefined;
  if (stringAt(input, ["state", "url"]) !== undefined) return undefined;
  return stringAt(input, ["state", "dir"]);
}

/** The string at `path` of settings not validated yet, if it is one. */
function stringAt(input: RawConfig | undefined, path: readonly string[]): string | undefined {
  let node: unknown = input;
  for (const key of path) {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return undefined;
    node = (node as RawConfig)[key];
  }
  return typeof node === "string" && node !== "" ? node : undefined;
}
