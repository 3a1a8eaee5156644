/**
 * Loads the configuration: the YAML file, then environment variables, then command-line
 * overrides (later wins), validated as one object. Problems come back as a list, each naming
 * its path (`poll.interval: must be greater than zero`), never as a stack trace.
 */
import { readFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";
import type { z } from "zod";
import { configSchema, type Config } from "./schema.js";
import { secretsInFile } from "./secret-files.js";

export class ConfigError extends Error {
  override readonly name = "ConfigError";

  constructor(
    readonly source: string,
    readonly problems: readonly string[],
  ) {
    super(`invalid configuration (${source}):\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
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
  { name: "PGCP_LISTEN", path: ["listen"] },
  { name: "PGCP_WEB_CONFIG_FILE", path: ["web", "configFile"], parse: (v) => v },
  { name: "PGCP_POLL_INTERVAL", path: ["poll", "interval"] },
  { name: "PGCP_LOG_LEVEL", path: ["log", "level"] },
];

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
    const secrets = secretsInFile(fromFile);
    if (secrets.length > 0) throw new ConfigError(source, secrets);
  }
  const file = options.file;
  return resolveConfig(
    source,
    [fromFile, fromEnvironment(options.env ?? process.env), options.overrides ?? {}],
    [
      () => (file === undefined ? undefined : `the file ${file}`),
      environmentVariableFor,
      options.overrideOrigin ?? (() => "the command line"),
    ],
  );
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
  const result = configSchema.safeParse(merged);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const line = describeIssue(issue);
      for (let i = layers.length - 1; i >= 0; i--) {
        const layer = layers[i];
        if (layer === undefined || !hasPath(layer, issue.path)) continue;
        const origin = origins[i]?.(issue.path);
        return origin === undefined ? line : `${line} (from ${origin})`;
      }
      return line;
    });
    throw new ConfigError(source, problems);
  }
  return result.data;
}

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
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (cause) {
    throw new ConfigError(source, [
      `not valid YAML: ${(cause as Error).message.split("\n")[0] ?? ""}`,
    ]);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ConfigError(source, ["the file must hold a mapping of settings"]);
  }
  return parsed as RawConfig;
}

/** One line per problem: `path.to[1].setting: message`. */
export function describeIssues(error: z.ZodError): string[] {
  return error.issues.map(describeIssue);
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path
    .map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join("");
  return `${where || "(root)"}: ${issue.message}`;
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
