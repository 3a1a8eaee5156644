/**
 * A running stack for the dashboards' end-to-end test: the simulator with generated traffic,
 * the whole exporter in-process (with alert sinks pointed at a local receiver, their URLs given
 * through its environment) and a real Prometheus scraping it every second.
 */
import { Writable } from "node:stream";
import { startExporter, type RunningExporter } from "../../../src/exporter/index.js";
import { resolveConfig, type RawConfig } from "../../../src/config/index.js";
import { createLogger } from "../../../src/logger.js";
import type { TestSimulator } from "../../support/simulator.js";

export interface StackExporter {
  readonly exporter: RunningExporter;
  readonly url: string;
  readonly port: number;
  /** The exporter's log lines at `warn` and above, for failure messages. */
  readonly logs: string[];
  stop(): Promise<void>;
}

/**
 * The exporter against `sim` with `settings` over test defaults (the simulator's URL and key,
 * a random loopback port, log level warn kept in memory), reading sink URLs from `env`.
 */
export async function startStackExporter(
  sim: TestSimulator,
  settings: RawConfig,
  env: NodeJS.ProcessEnv,
): Promise<StackExporter> {
  const config = resolveConfig("dashboards e2e test", [
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
    env,
  });
  return {
    exporter,
    url: exporter.server.url,
    port: exporter.server.port,
    logs,
    stop: () => exporter.stop(),
  };
}
