/**
 * Helpers for the daemon's integration tests: the whole exporter in-process against a test
 * simulator, with a logger whose JSON lines the test can read (`test/support/capture-logger.ts`),
 * a reader for `/metrics` samples, and this suite's defaults for a temporary directory and for
 * the condition poller of `test/support/wait.ts` (tests wait for what the daemon does, never
 * for a fixed time).
 */
import type { Clock } from "../../src/clock.js";
import { resolveConfig, type Config, type RawConfig } from "../../src/config/index.js";
import { startExporter, type RunningExporter } from "../../src/exporter/index.js";
import { captureLogger } from "../support/capture-logger.js";
import type { Receiver } from "../support/receiver.js";
import { findSample, parseExposition, type Sample } from "../support/exposition.js";
import { tempDir as newTempDir } from "../support/temp-dir.js";
import { waitForWith } from "../support/wait.js";

export { findSample, parseExposition, type Sample };

export type { LogLine } from "../support/capture-logger.js";

/** A temporary directory (test/support/temp-dir.ts), with this suite's prefix by default. */
export async function tempDir(prefix = "pgcp-daemon-"): Promise<string> {
  return newTempDir(prefix);
}

/** `waitFor` (test/support/wait.ts), giving up after 15 s. */
export const waitFor = waitForWith({ timeoutMs: 15_000 });

/** Fast settings for a daemon under test; `raw` is merged over them. */
export function testConfig(raw: RawConfig): Config {
  return resolveConfig("test", [
    {
      listen: "127.0.0.1:0",
      // Under the scheduler's one-second tick: every project is polled at every tick.
      poll: { interval: 0.5, fastInterval: 0.5, endpointsInterval: 0, jitter: 0 },
      api: { maxAttempts: 1, timeout: 5 },
      log: { level: "debug" },
    },
    raw,
  ]);
}

export interface TestExporter {
  readonly exporter: RunningExporter;
  readonly logs: ReturnType<typeof captureLogger>;
  readonly config: Config;
  /** The current `/metrics` samples, read over HTTP after a fresh rendering. */
  samples(): Promise<Sample[]>;
  /** The value of the one sample of `name` whose labels include `labels`, if any. */
  value(name: string, labels?: Record<string, string>): Promise<number | undefined>;
  /** GET a path of the exporter's HTTP server. */
  get(pathname: string): Promise<{ status: number; text: string }>;
  stop(): Promise<void>;
}

/**
 * `env`: where the accounts' keys are read from (default: the process's environment); `clock`:
 * the exporter's clocks (default the system's; `test/support/stepped-clock.ts` steps one).
 */
export async function startTestExporter(
  raw: RawConfig,
  env?: NodeJS.ProcessEnv,
  clock?: Clock,
): Promise<TestExporter> {
  const config = testConfig(raw);
  const logs = captureLogger(config.log.level);
  const exporter = await startExporter(config, {
    logger: logs.logger,
    ...(env === undefined ? {} : { env }),
    ...(clock === undefined ? {} : { clock }),
  });
  const get = async (pathname: string) => {
    const response = await fetch(exporter.server.url + pathname);
    return { status: response.status, text: await response.text() };
  };
  const samples = async () => {
    await exporter.metrics.refresh();
    const { status, text } = await get("/metrics");
    if (status !== 200) throw new Error(`/metrics answered ${status}`);
    return parseExposition(text);
  };
  let stopped = false;
  return {
    exporter,
    logs,
    config,
    samples,
    value: async (name, labels = {}) => findSample(await samples(), name, labels)?.value,
    get,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await exporter.stop();
    },
  };
}

/** Waits until `pgcp_project_up` is 1 for every one of `ids` (by default: their first polls). */
export async function everyProjectUp(
  e: TestExporter,
  ids: readonly string[],
  what = "every project's first poll",
): Promise<void> {
  await waitFor(what, async () => {
    for (const id of ids) if ((await e.value("pgcp_project_up", { project: id })) !== 1) return;
    return true;
  });
}

/** The alerts a webhook receiver got, as `kind operation` (each delivery of each alert). */
export function receivedAlerts(hook: Pick<Receiver, "requests">): string[] {
  return hook.requests.flatMap((r) =>
    ((r.json as { alerts?: { kind: string; operation_id: string }[] }).alerts ?? []).map(
      (a) => `${a.kind} ${a.operation_id}`,
    ),
  );
}
