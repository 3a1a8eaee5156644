/**
 * The whole exporter in-process (`startExporter`: daemon, metrics and HTTP server) against a
 * test simulator, with a validated configuration, a quiet logger whose lines are kept for
 * failure messages, and helpers to read `/metrics` over HTTP.
 */
import { Writable } from "node:stream";
import { startExporter, type RunningExporter } from "../../../src/exporter/index.js";
import { resolveConfig, type RawConfig } from "../../../src/config/index.js";
import { createLogger } from "../../../src/logger.js";
import type { TestSimulator } from "../../support/simulator.js";
import { removeDir, tempDir as newTempDir } from "../../support/temp-dir.js";

export interface TestExporter {
  readonly exporter: RunningExporter;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** The exporter's log lines at `warn` and above (JSON), for failure messages. */
  readonly logs: string[];
  stop(): Promise<void>;
}

/**
 * Starts the exporter against `sim` with `settings` merged over test defaults: the
 * simulator's URL and key, `listen` on a random loopback port, log level `warn` (kept in
 * memory). `settings` must name `projects` and `state.dir`. The sinks read their URLs and
 * secrets from `env` (default: the process's).
 */
export async function startTestExporter(
  sim: TestSimulator,
  settings: RawConfig,
  env?: NodeJS.ProcessEnv,
): Promise<TestExporter> {
  const config = resolveConfig("e2e test", [
    {
      api: { url: sim.apiUrl, key: sim.apiKey },
      listen: "127.0.0.1:0",
      log: { level: "warn" },
    },
    settings,
  ]);
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      logs.push(String(chunk).trimEnd());
      done();
    },
  });
  const exporter = await startExporter(config, {
    logger: createLogger(config.log.level, sink),
    ...(env === undefined ? {} : { env }),
  });
  return {
    exporter,
    url: exporter.server.url,
    port: exporter.server.port,
    logs,
    stop: () => exporter.stop(),
  };
}

/** GET `/metrics` over HTTP; the body as text. */
export async function scrape(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`);
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}`);
  return text;
}

/** One sample line of the text exposition format. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The sample lines of a rendering, parsed (HELP, TYPE and blank lines are skipped). */
export function parseSamples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const match = SAMPLE.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const m of (match[2] ?? "").matchAll(LABEL)) {
      labels[m[1] ?? ""] = (m[2] ?? "").replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    out.push({ name: match[1] ?? "", labels, value: parseValue(match[3] ?? "") });
  }
  return out;
}

function parseValue(text: string): number {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  return Number(text);
}

/**
 * A temporary directory (test/support/temp-dir.ts), removed by the returned function, or else
 * at the end of the test file.
 */
export async function tempDir(prefix: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await newTempDir(prefix);
  return { dir, remove: () => removeDir(dir) };
}

/** Polls `check` every `intervalMs` until it returns a value other than undefined. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const cause = last instanceof Error ? `: ${last.message}` : "";
      throw new Error(`timed out waiting for ${what}${cause}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50));
  }
}
