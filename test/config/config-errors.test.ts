/**
 * Configuration problems as a person reads them: the known key a mistyped one is closest to,
 * what a setting expects with an example (never the schema library's words), YAML syntax errors
 * with their line, and every problem of a load listed at once.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  ConfigError,
  SINK_KINDS_LIST,
  defaultSink,
  loadConfig,
  loadWebConfig,
  resolveConfig,
  type RawConfig,
} from "../../src/config/index.js";
import { tempDir } from "../support/temp-dir.js";
import { fileWith, problemsOf } from "./support/files.js";

const ENV = { PGCP_API_KEY: "k", PGCP_PROJECTS: "alpha-1" };

/** The problems of resolving `layer` over a valid base (key and projects set). */
function problems(layer: RawConfig): readonly string[] {
  try {
    resolveConfig("test", [{ api: { key: "k" }, projects: ["alpha-1"] }, layer]);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

/** What zod says in its own words; none of it may reach a user. */
const LIBRARY_WORDS =
  /Invalid input|Invalid option|Invalid URL|Invalid string|Unrecognized key|expected \w+, received|Too (small|big)|Invalid key in record/;

describe("an unknown key", () => {
  it("is named by its path, with the known key it is closest to", () => {
    expect(problems({ poll: { intervall: 5 }, api: { concurency: 2 } })).toEqual([
      "api.concurency: unknown setting; did you mean api.concurrency?",
      "poll.intervall: unknown setting; did you mean poll.interval?",
    ]);
    // Only the case differs.
    expect(problems({ poll: { fastinterval: 5 } })).toEqual([
      "poll.fastinterval: unknown setting; did you mean poll.fastInterval?",
    ]);
  });

  it("written in the wrong section is pointed to the section that has it", () => {
    expect(problems({ interval: 5, pageLimit: 100 })).toEqual([
      "interval: unknown setting here; did you mean poll.interval?",
      "pageLimit: unknown setting here; did you mean poll.pageLimit?",
    ]);
  });

  it("close to nothing lists what the section takes", () => {
    expect(problems({ status: { colour: "blue" } })).toEqual([
      "status.colour: unknown setting (status takes page)",
    ]);
  });

  it("of a sink is named by its full path too", () => {
    expect(problems({ sinks: [{ name: "s", kind: "slack", groupWindw: 1 }] })).toEqual([
      "sinks[0].groupWindw: unknown setting; did you mean sinks[0].groupWindow?",
    ]);
  });
});

describe("a value of the wrong type", () => {
  it("says what the setting expects, with an example", () => {
    expect(problems({ listen: 9700 })).toEqual([
      'listen: must be a string "host:port", for example "0.0.0.0:9700"',
    ]);
    expect(
      problems({
        poll: { interval: true, pageLimit: 1.5 },
        api: { requestsPerMinute: "fast" },
        log: { level: "loud" },
        web: 5,
        metrics: { include: "pgcp_operations_total" },
        alerts: { recovered: "yes" },
        sinks: [{ kind: "slack" }],
      }),
    ).toEqual([
      "api.requestsPerMinute: must be a number, for example 700",
      "web: must be a mapping of settings: configFile, healthWithoutAuth",
      'poll.interval: must be a duration: seconds, or a text such as "30s", "5m" or "1h30m", for example "30s"',
      "poll.pageLimit: must be a whole number, for example 500",
      "alerts.recovered: must be true or false",
      "sinks[0].name: is required: a name of lowercase letters, digits, - or _, for example oncall",
      "metrics.include: must be a list of metric family names, for example [pgcp_operations_total]",
      "log.level: must be one of trace, debug, info, warn, error, fatal, silent",
    ]);
  });

  it("of any setting is said in our words, with what it expects", async () => {
    // Every setting the defaults hold, given a value of a type it does not take. (api.key
    // comes from the environment only, always a string.)
    const config = await loadConfig({ env: ENV });
    const settings = settingsOf(config as unknown as RawConfig).filter(
      ([path]) => path.join(".") !== "api.key",
    );
    expect(settings.length).toBeGreaterThan(40);
    const layers = settings.map(([path, value]) =>
      layerAt(path, typeof value === "boolean" ? "maybe" : true),
    );
    // And every setting of a sink of each kind.
    for (const kind of SINK_KINDS_LIST) {
      for (const [path, value] of settingsOf(defaultSink(kind))) {
        if (path[0] === "kind") continue;
        const sink = { name: "s", kind, ...layerAt(path, typeof value === "boolean" ? "x" : true) };
        layers.push({ sinks: [sink] });
      }
    }
    for (const layer of layers) {
      const found = problems(layer);
      expect(found, JSON.stringify(layer)).toHaveLength(1);
      const [problem = ""] = found;
      expect(problem).not.toMatch(LIBRARY_WORDS);
      // What it expects: an example, the values it takes, or the settings of its section.
      expect(problem, problem).toMatch(
        /^[\w.[\]]+: must be .*(for example|one of|true or false|a mapping of settings)/,
      );
    }
  });
});

describe("a YAML syntax error", () => {
  it("gives its line and column, and shows the offending line", async () => {
    const file = await fileWith("projects: all\npoll:\n  interval: 5\n fastInterval: [\n");
    const error = await loadConfig({ file, env: ENV }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(
      [
        `invalid configuration (${file}):`,
        "  - not valid YAML at line 4, column 1: all mapping items must start at the same column",
        "      4 |  fastInterval: [",
        "        | ^",
      ].join("\n"),
    );
    expect((error as ConfigError).message).not.toMatch(/column \d+:\s*$/m);
  });

  it("of each kind in the file is listed", async () => {
    const file = await fileWith("projects: all\nlog:\n  level: info\nlog:\n  format: json\n");
    expect(await problemsOf(loadConfig({ file, env: ENV }))).toEqual([
      "not valid YAML at line 4, column 1: map keys must be unique\n4 | log:\n  | ^",
    ]);
  });
});

describe("every problem at once", () => {
  it("lists a silence naming a missing sink with the other problems", () => {
    expect(
      problems({
        listen: 9700,
        sinks: [{ name: "oncall", kind: "slack" }],
        silences: [
          { name: "nightly", cron: "0 2 * * *", duration: "1h", sinks: ["pager"] },
          { name: "broken", cron: "0 25 * * *", duration: "1h", sinks: ["pagr"] },
        ],
      }),
    ).toEqual([
      'listen: must be a string "host:port", for example "0.0.0.0:9700"',
      expect.stringMatching(/^silences\[1\]\.cron: the hour field "25" is not valid/),
      "silences[0].sinks[0]: no sink is named pager (sinks: oncall)",
      "silences[1].sinks[0]: no sink is named pagr (sinks: oncall)",
    ]);
  });

  it("lists a secret written in the file with the other problems, naming its key once", async () => {
    const file = await fileWith(
      "projects: all\nlisten: 9700\nsinks:\n  - name: s\n    kind: slack\n    url: https://hooks.example/T/B/X\n",
    );
    expect(await problemsOf(loadConfig({ file, env: { PGCP_API_KEY: "k" } }))).toEqual([
      "sinks[0].url: a secret is not read from the file: name an environment variable in urlEnv",
      `listen: must be a string "host:port", for example "0.0.0.0:9700" (from the file ${file})`,
    ]);
  });

  it("lists the web configuration's missing files with its other problems", async () => {
    const dir = await tempDir("pgcp-web-");
    const file = path.join(dir, "web.yml");
    const missing = path.join(dir, "missing.crt");
    await writeFile(
      file,
      `tls_server_config:\n  cert_file: ${missing}\n  key_file: 3\nbasic_auth_user: {}\n`,
    );
    expect(await problemsOf(loadWebConfig(file))).toEqual([
      'tls_server_config.key_file: must be a file\'s path, for example "/etc/pgcp-exporter/tls.key"',
      "basic_auth_user: unknown setting; did you mean basic_auth_users?",
      `tls_server_config.cert_file: cannot read ${missing} (ENOENT)`,
    ]);
  });
});

/** Each setting (not a list's items) `config` holds, through its sections, with its value. */
function settingsOf(
  config: RawConfig,
  prefix: readonly string[] = [],
): (readonly [string[], unknown])[] {
  return Object.entries(config).flatMap(([key, value]) => {
    const at = [...prefix, key];
    // A section of names (stuck.actions) is a setting of its own.
    if (typeof value === "object" && value !== null && !Array.isArray(value) && key !== "actions") {
      const inner = settingsOf(value as RawConfig, at);
      if (inner.length > 0) return inner;
    }
    return [[at, value] as const];
  });
}

function layerAt(path: readonly string[], value: unknown): RawConfig {
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value) as RawConfig;
}
