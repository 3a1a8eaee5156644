/**
 * `pgcp-exporter run`: the exporter daemon. Loads the configuration (file, environment, flags),
 * starts the HTTP server and the scheduler, and on SIGTERM/SIGINT stops polling (a poll in
 * flight is abandoned without a commit), closes the server and exits 0.
 */
import { parseArgs } from "node:util";
import {
  ConfigError,
  loadConfig,
  resolveSinks,
  type Config,
  type RawConfig,
} from "../config/index.js";
import { createDaemon, type Daemon, type DaemonObserver } from "../daemon/index.js";
import { createLogger, errorFields, type Logger } from "../logger.js";
import { createExporterMetrics, type ExporterMetrics } from "../metrics/index.js";
import { startServer, type RunningServer } from "../server/index.js";
import { PACKAGE } from "../version.js";
import type { Command } from "./index.js";

const HELP = `usage: pgcp-exporter run [options]

Watches the operations log of each configured project and serves Prometheus metrics.

options:
  --config FILE        YAML configuration file (see config/pgcp-exporter.example.yaml)
  --api-url URL        API base address (env PGCP_API_URL; default the real API)
  --projects LIST      comma-separated project ids, or "all" (env PGCP_PROJECTS)
  --state-dir DIR      where project state files live (env PGCP_STATE_DIR; default ./state)
  --listen ADDR        host:port or :port of the HTTP server (env PGCP_LISTEN; default :9642)
  --poll-interval SEC  base poll interval (env PGCP_POLL_INTERVAL; default 30)
  --log-level LEVEL    trace, debug, info, warn, error (env PGCP_LOG_LEVEL; default info)

The API key is read from the environment only: PGCP_API_KEY.
Precedence: configuration file, then environment variables, then flags.`;

const FLAGS = {
  config: { type: "string" },
  "api-url": { type: "string" },
  projects: { type: "string" },
  "state-dir": { type: "string" },
  listen: { type: "string" },
  "poll-interval": { type: "string" },
  "log-level": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** Command-line flags as a configuration layer. */
function overridesFrom(values: Partial<Record<keyof typeof FLAGS, string | boolean>>): RawConfig {
  const out: RawConfig = {};
  const api: RawConfig = {};
  if (typeof values["api-url"] === "string") api.url = values["api-url"];
  if (Object.keys(api).length > 0) out.api = api;
  if (typeof values.projects === "string") {
    out.projects =
      values.projects.trim() === "all"
        ? "all"
        : values.projects
            .split(",")
            .map((s) => s.trim())
            .filter((s) => s.length > 0);
  }
  if (typeof values["state-dir"] === "string") out.state = { dir: values["state-dir"] };
  if (typeof values.listen === "string") out.listen = values.listen;
  if (typeof values["poll-interval"] === "string") {
    out.poll = { interval: values["poll-interval"] };
  }
  if (typeof values["log-level"] === "string") out.log = { level: values["log-level"] };
  return out;
}

export interface RunningExporter {
  readonly daemon: Daemon;
  readonly metrics: ExporterMetrics;
  readonly server: RunningServer;
  readonly logger: Logger;
  stop(): Promise<void>;
}

/** Starts the exporter for a validated configuration (also used by the demo and tests). */
export async function startExporter(
  config: Config,
  opts: { logger?: Logger; env?: NodeJS.ProcessEnv } = {},
): Promise<RunningExporter> {
  const logger = opts.logger ?? createLogger(config.log.level);
  // Throws a ConfigError naming a missing variable (never a secret's value).
  const sinks = resolveSinks(config, opts.env ?? process.env);
  // The metrics render before the daemon exists (their first rendering is built at once).
  const started: { daemon?: Daemon } = {};
  const metrics = createExporterMetrics({
    version: PACKAGE.version,
    perProjectHistograms: config.metrics.perProjectHistograms,
    ...(config.metrics.include.length > 0 ? { include: config.metrics.include } : {}),
    exclude: config.metrics.exclude,
    limiterTokens: () => started.daemon?.client.limiterStats().tokensRemaining,
    scheduler: () => started.daemon?.scheduler,
    onError: (error) => {
      logger.error(errorFields(error), "rendering /metrics failed; serving the previous rendering");
    },
  });
  const ready = readiness();
  const running = createDaemon(config, {
    logger,
    observers: [metrics, ready.observer],
    apiEvents: metrics.apiEvents,
    sinks,
    notifierObserver: metrics.notifierObserver,
  });
  started.daemon = running;
  await running.start();
  // The first rendering was built before the committed state was loaded: rebuild it before the
  // first scrape can arrive, so that a restart never serves a /metrics without the persisted
  // counters (the change itself would only show after the rendering's gather delay).
  await metrics.refresh();
  const server = await startServer({
    listen: config.listen,
    metrics,
    notReadyReason: ready.reason,
  });
  logger.info({ url: server.url }, "serving /metrics, /healthz and /readyz");
  return {
    daemon: running,
    metrics,
    server,
    logger,
    async stop() {
      await running.stop();
      await server.close();
      metrics.close();
    },
  };
}

export const runCommand: Command = {
  name: "run",
  summary: "run the exporter daemon",
  async run(argv) {
    let values;
    try {
      ({ values } = parseArgs({ args: argv, options: FLAGS, strict: true }));
    } catch (error) {
      process.stderr.write(`pgcp-exporter run: ${(error as Error).message}\n\n${HELP}\n`);
      return 2;
    }
    if (values.help === true) {
      process.stdout.write(HELP + "\n");
      return 0;
    }
    let config: Config;
    try {
      config = await loadConfig({ file: values.config, overrides: overridesFrom(values) });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      process.stderr.write(`pgcp-exporter: ${error.message}\n`);
      return 2;
    }
    const logger = createLogger(config.log.level);
    let exporter: RunningExporter;
    try {
      exporter = await startExporter(config, { logger });
    } catch (error) {
      if (error instanceof ConfigError) {
        process.stderr.write(`pgcp-exporter: ${error.message}\n`);
        return 2;
      }
      logger.fatal(errorFields(error), "exporter could not start");
      return 1;
    }
    await new Promise<void>((resolve) => {
      const onSignal = (signal: NodeJS.Signals) => {
        logger.info({ signal }, "shutting down");
        process.off("SIGTERM", onSignal);
        process.off("SIGINT", onSignal);
        resolve();
      };
      process.on("SIGTERM", onSignal);
      process.on("SIGINT", onSignal);
    });
    await exporter.stop();
    logger.info("stopped");
    return 0;
  },
};

/**
 * Readiness as kube-state-metrics means it: ready once the state is loaded and at least one
 * poll has been committed.
 */
function readiness(): { observer: DaemonObserver; reason: () => string | undefined } {
  let projects = 0;
  let committed = false;
  return {
    observer: {
      projectsChanged: (ids) => {
        projects = ids.length;
      },
      committed: () => {
        committed = true;
      },
    },
    reason: () => {
      if (projects === 0) return "no project is watched yet";
      if (!committed) return "no poll has completed yet";
      return undefined;
    },
  };
}
