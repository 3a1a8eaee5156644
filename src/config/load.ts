/**
 * Loads the configuration: the YAML file, then environment variables, then command-line
 * overrides (later wins), validated as one object. Problems come back as a list, each naming
 * its path (`poll.interval: must be greater than zero`), never as a stack trace; the words
 * are ours (`problems.ts`).
 */
import { readFile } from "node:fs/promises";
import type { z } from "zod";
import { silenceSinkProblems } from "./cross-checks.js";
import { issueMessages, issueProblems, pathText, readYaml, type Problem } from "./problems.js";
import { configSchema, type Config } from "./schema.js";
import { secretsInFile } from "./secret-files.js";
import { CONFIG_HINTS } from "./setting-hints.js";

/** Where problems were found (`config.yaml`, `environment`) and what they are. */
export interface ProblemSection {
  readonly source: string;
  readonly problems: readonly string[];
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  /** The problems by where they were found, in the order found. */
  readonly sections: readonly ProblemSection[];
  /** Private, so that no logger serialises it: it may hold the API key. */
  readonly #input: RawConfig | undefined;

  /**
   * `problems` found in `source`, or several sections at once. `input`: the settings as merged
   * before validation, when known, so that the files they name can still be checked.
   */
  constructor(
    source: string | readonly ProblemSection[],
    problems: readonly string[] = [],
    input?: RawConfig,
  ) {
    const sections = typeof source === "string" ? [{ source, problems }] : source;
    super(sections.map(sectionText).join("\n"));
    this.sections = sections;
    this.#input = input;
  }

  /** The settings as merged before validation (secrets included: never to be shown). */
  get input(): RawConfig | undefined {
    return this.#input;
  }

  /** Where the (first) problems were found. */
  get source(): string {
    return this.sections[0]?.source ?? "configuration";
  }

  /** Every problem, naming its source when the problems come from several. */
  get problems(): string[] {
    if (this.sections.length === 1) return [...(this.sections[0]?.problems ?? [])];
    return this.sections.flatMap((s) => s.problems.map((p) => `${s.source}: ${p}`));
  }

  /** One error listing every problem of `errors`, those of one source together. */
  static combine(errors: readonly ConfigError[]): ConfigError {
    const bySource = new Map<string, string[]>();
    for (const section of errors.flatMap((e) => e.sections)) {
      if (section.problems.length === 0) continue;
      bySource.set(section.source, [...(bySource.get(section.source) ?? []), ...section.problems]);
    }
    return new ConfigError([...bySource].map(([source, problems]) => ({ source, problems })));
  }
}

/** `invalid configuration (file):` and a line per problem, continuation lines indented. */
function sectionText(section: ProblemSection): string {
  const lines = section.problems.map((p) => `  - ${p.split("\n").join("\n      ")}`);
  return `invalid configuration (${section.source}):\n${lines.join("\n")}`;
}

/** Plain nested object of settings, before validation. */
export type RawConfig = Record<string, unknown>;

/** The environment variables the configuration reads, and where each one goes. */
export const ENVIRONMENT: readonly {
  name: string;
  path: string[];
  parse?: (v: string) => unknown;
}[] = [
  { name: "PGCP_API_URL", path: ["api", "url"] },
  { name: "PGCP_API_KEY", path: ["api", "key"] },
  {
    name: "PGCP_PROJECTS",
    path: ["projects"],
    parse: parseProjectList,
  },
  { name: "PGCP_STATE_DIR", path: ["state", "dir"] },
  { name: "PGCP_STATE_URL", path: ["state", "url"], parse: (v) => v },
  { name: "PGCP_STATE_SCHEMA", path: ["state", "schema"], parse: (v) => v },
  { name: "PGCP_LISTEN", path: ["listen"] },
  { name: "PGCP_WEB_CONFIG_FILE", path: ["web", "configFile"], parse: (v) => v },
  { name: "PGCP_POLL_INTERVAL", path: ["poll", "interval"] },
  { name: "PGCP_LOG_LEVEL", path: ["log", "level"] },
  // OpenTelemetry's standard variables (docs/opentelemetry.md); the headers are secrets (`otlp.ts`).
  { name: "OTEL_EXPORTER_OTLP_ENDPOINT", path: ["otlp", "endpoint"], parse: (v) => v },
  {
    name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    path: ["otlp", "traces", "endpoint"],
    parse: (v) => v,
  },
  {
    name: "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    path: ["otlp", "metrics", "endpoint"],
    parse: (v) => v,
  },
  { name: "OTEL_EXPORTER_OTLP_PROTOCOL", path: ["otlp", "protocol"], parse: (v) => v },
  {
    name: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    path: ["otlp", "traces", "protocol"],
    parse: (v) => v,
  },
  {
    name: "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
    path: ["otlp", "metrics", "protocol"],
    parse: (v) => v,
  },
  { name: "OTEL_EXPORTER_OTLP_TIMEOUT", path: ["otlp", "timeout"], parse: fromMilliseconds },
  { name: "OTEL_SERVICE_NAME", path: ["otlp", "serviceName"], parse: (v) => v },
  { name: "OTEL_RESOURCE_ATTRIBUTES", path: ["otlp", "resourceAttributes"], parse: parseKeyValues },
  {
    name: "OTEL_METRIC_EXPORT_INTERVAL",
    path: ["otlp", "metrics", "interval"],
    parse: fromMilliseconds,
  },
];

/** A duration in milliseconds, as OpenTelemetry's variables give one, in seconds. */
function fromMilliseconds(text: string): unknown {
  return /^\d+(\.\d+)?$/.test(text.trim()) ? Number(text.trim()) / 1000 : text;
}

/**
 * `key=value,key=value` as OpenTelemetry's variables list pairs (values percent-encoded), as a
 * mapping; the text itself when it is not one, for the schema to refuse.
 */
export function parseKeyValues(text: string): unknown {
  const out: Record<string, string> = {};
  for (const item of text.split(",")) {
    if (item.trim() === "") continue;
    const at = item.indexOf("=");
    if (at <= 0) return text;
    try {
      out[decodeURIComponent(item.slice(0, at).trim())] = decodeURIComponent(
        item.slice(at + 1).trim(),
      );
    } catch {
      return text;
    }
  }
  return out;
}

/** `all`, or a comma-separated list of project ids (blanks ignored). */
export function parseProjectList(text: string): "all" | string[] {
  if (text.trim() === "all") return "all";
  return text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export interface LoadOptions {
  /** Path of the YAML file; none means environment and overrides only. */
  readonly file?: string | undefined;
  readonly env?: NodeJS.ProcessEnv;
  /** Settings from the command line, as nested objects (highest precedence). */
  readonly overrides?: RawConfig;
  /** Names the flag a setting of `overrides` came from (`--listen`), for problems. */
  readonly overrideOrigin?: Origin;
}

/** Where a layer's setting at `path` came from, as a problem names it (`PGCP_LISTEN`). */
export type Origin = (path: readonly PropertyKey[]) => string | undefined;

export async function loadConfig(options: LoadOptions): Promise<Config> {
  let fromFile: RawConfig = {};
  const source = options.file ?? "environment and flags";
  if (options.file !== undefined) {
    let text: string;
    try {
      text = await readFile(options.file, "utf8");
    } catch (cause) {
      const code = (cause as NodeJS.ErrnoException).code ?? "error";
      throw new ConfigError(source, [`cannot read the configuration file (${code})`]);
    }
    fromFile = parseYamlDocument(source, text);
  }
  const file = options.file;
  // A secret written in the file is refused, and listed with every other problem.
  const secrets = secretsInFile(fromFile);
  let config: Config | undefined;
  let invalid: ConfigError | undefined;
  try {
    config = resolveConfig(
      source,
      [fromFile, fromEnvironment(options.env ?? process.env), options.overrides ?? {}],
      [
        () => (file === undefined ? undefined : `the file ${file}`),
        environmentVariableFor,
        options.overrideOrigin ?? (() => "the command line"),
      ],
    );
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    invalid = error;
  }
  if (config !== undefined && secrets.length === 0) return config;
  // A secret's key is named once, by where the secret belongs (not also as an unknown key).
  const secretKeys = secrets.map((p) => `${p.slice(0, p.indexOf(": "))}: `);
  const others = (invalid?.problems ?? []).filter(
    (p) => !secretKeys.some((key) => p.startsWith(key)),
  );
  // The settings go with the error either way: the files they name can still be checked.
  throw new ConfigError(source, [...secrets, ...others], invalid?.input ?? config);
}

/**
 * Merges layers (later wins) and validates the result. A problem with a value names the layer it
 * came from, when `origins` (one per layer) can say: `listen: … (from --listen)`.
 */
export function resolveConfig(
  source: string,
  layers: readonly RawConfig[],
  origins: readonly Origin[] = [],
): Config {
  // An absent `api` section is an empty one, so that a missing key is reported as api.key.
  const merged = layers.reduce<RawConfig>((acc, layer) => deepMerge(acc, layer), { api: {} });
  const result = configSchema.safeParse(merged, { error: CONFIG_MESSAGES });
  // Checked on the settings as given, so that a silence wrong elsewhere is checked too.
  const sinkProblems = silenceSinkProblems(merged);
  if (result.success && sinkProblems.length === 0) return result.data;
  const found: Problem[] = [
    ...(result.success ? [] : issueProblems(result.error)),
    ...sinkProblems.map(({ path, message }) => ({ path, text: `${pathText(path)}: ${message}` })),
  ];
  const problems = found.map(({ path, text }) => {
    for (let i = layers.length - 1; i >= 0; i--) {
      const layer = layers[i];
      if (layer === undefined || !hasPath(layer, path)) continue;
      const origin = origins[i]?.(path);
      return origin === undefined ? text : `${text} (from ${origin})`;
    }
    return text;
  });
  throw new ConfigError(source, problems, merged);
}

/** Words every problem of the configuration a schema has not worded itself. */
const CONFIG_MESSAGES = issueMessages(configSchema, CONFIG_HINTS);

/** The environment variable that sets the setting at `path` (or the list it is part of). */
function environmentVariableFor(path: readonly PropertyKey[]): string | undefined {
  return ENVIRONMENT.find((v) => v.path.every((key, i) => path[i] === key))?.name;
}

/** Whether `layer` holds a value at `path`, or at a part of it (a list it belongs to). */
function hasPath(layer: RawConfig, path: readonly PropertyKey[]): boolean {
  let node: unknown = layer;
  for (const key of path) {
    if (Array.isArray(node)) return true;
    if (!isPlainObject(node) || !(String(key) in node)) return false;
    node = node[String(key)];
  }
  return true;
}

export function fromEnvironment(env: NodeJS.ProcessEnv): RawConfig {
  const out: RawConfig = {};
  for (const variable of ENVIRONMENT) {
    const value = env[variable.name];
    if (value === undefined || value === "") continue;
    setPath(out, variable.path, variable.parse ? variable.parse(value) : numberOrString(value));
  }
  return out;
}

function parseYamlDocument(source: string, text: string): RawConfig {
  const read = readYaml(text);
  if (!read.ok) throw new ConfigError(source, read.problems);
  const parsed = read.value;
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ConfigError(source, ["the file must hold a mapping of settings"]);
  }
  return parsed as RawConfig;
}

/** One line per problem: `path.to[1].setting: message`. */
export function describeIssues(error: z.ZodError): string[] {
  return issueProblems(error).map((p) => p.text);
}

function numberOrString(value: string): unknown {
  return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
}

function setPath(target: RawConfig, path: readonly string[], value: unknown): void {
  let node = target;
  path.forEach((key, i) => {
    if (i === path.length - 1) {
      node[key] = value;
      return;
    }
    const child = node[key];
    const next: RawConfig = isPlainObject(child) ? child : {};
    node[key] = next;
    node = next;
  });
}

function deepMerge(base: RawConfig, layer: RawConfig): RawConfig {
  const out: RawConfig = { ...base };
  for (const [key, value] of Object.entries(layer)) {
    const prev = out[key];
    out[key] = isPlainObject(prev) && isPlainObject(value) ? deepMerge(prev, value) : value;
  }
  return out;
}

function isPlainObject(value: unknown): value is RawConfig {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
