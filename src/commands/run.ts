/**
 * `pgcp-exporter run`: the exporter daemon. Loads the configuration (file, environment, flags),
 * starts the HTTP server and the scheduler, reloads the configuration on SIGHUP, and on
 * SIGTERM/SIGINT stops polling (a poll in flight is abandoned without a commit), closes the
 * server and exits 0.
 */
import {
  ConfigError,
  loadWebConfig,
  planReload,
  resolveSinks,
  type Config,
  type ResolvedSink,
  type WebSecurity,
} from "../config/index.js";
import { createDaemon, type Daemon, type DaemonObserver } from "../daemon/index.js";
import { createLogger, errorFields, type Logger } from "../logger.js";
import { createExporterMetrics, type ExporterMetrics } from "../metrics/index.js";
import {
  createStatusPage,
  startServer,
  statusPageSecrets,
  statusPageSinks,
  type RunningServer,
} from "../server/index.js";
import { PACKAGE, REVISION } from "../version.js";
import { CONFIG_FLAGS_HELP, loadFromArgs, type Settings } from "./config-flags.js";
import type { Command } from "./index.js";

const HELP = `usage: pgcp-exporter run [options]

Watches the operations log of each configured project, serves Prometheus metrics and the
status page, and sends failure alerts to the configured sinks. SIGHUP reloads the
configuration: projects, sinks and routing, alert rules, stuck thresholds, the log level and
the web configuration apply at once; other changed settings are named in the log and wait for
a restart. A configuration that is not valid is refused and the running one kept.

options:
${CONFIG_FLAGS_HELP}`;

export interface RunningExporter {
  readonly daemon: Daemon;
  readonly metrics: ExporterMetrics;
  readonly server: RunningServer;
  readonly logger: Logger;
  /**
   * Reads the settings with `load` and applies their live part (see `planReload`); one reload
   * at a time. A load or an application that fails keeps the running configuration. The
   * outcome is logged and shown in `pgcp_config_last_reload_successful`.
   */
  reload(load: () => Promise<Settings>): Promise<ReloadOutcome>;
  stop(): Promise<void>;
}

export type ReloadOutcome =
  | { readonly ok: true; readonly restartNeeded: readonly string[] }
  | { readonly ok: false; readonly problems: readonly string[] };

/** Starts the exporter for a validated configuration (also used by the demo and tests). */
export async function startExporter(
  config: Config,
  opts: {
    logger?: Logger;
    env?: NodeJS.ProcessEnv;
    sinks?: readonly ResolvedSink[];
    /** The web configuration; by default read from `web.configFile`, if set. */
    web?: WebSecurity | undefined;
    /** More observers of the daemon (the demo's summary). */
    observers?: readonly DaemonObserver[];
  } = {},
): Promise<RunningExporter> {
  const logger = opts.logger ?? createLogger(config.log.level, undefined, config.log.format);
  // Throws a ConfigError naming a missing variable (never a secret's value).
  const sinks = opts.sinks ?? resolveSinks(config, opts.env ?? process.env);
  const web =
    "web" in opts || config.web.configFile === undefined
      ? opts.web
      : await loadWebConfig(config.web.configFile);
  // The metrics render before the daemon exists (their first rendering is built at once).
  const started: { daemon?: Daemon } = {};
  const loads = { lastReloadSuccessful: true, lastSuccessMs: Date.now() };
  const metrics = createExporterMetrics({
    version: PACKAGE.version,
    revision: REVISION,
    perProjectHistograms: config.metrics.perProjectHistograms,
    ...(config.metrics.include.length > 0 ? { include: config.metrics.include } : {}),
    exclude: config.metrics.exclude,
    limiterTokens: () => started.daemon?.client.limiterStats().tokensRemaining,
    scheduler: () => started.daemon?.scheduler,
    leases: () => started.daemon?.leases,
    configLoads: () => loads,
    onError: (error) => {
      logger.error(errorFields(error), "rendering /metrics failed; serving the previous rendering");
    },
  });
  const ready = readiness();
  const statusPage = createStatusPage({
    source: () => started.daemon,
    version: PACKAGE.version,
    apiUrl: config.api.url,
    sinks: statusPageSinks(sinks),
    notReadyReason: ready.reason,
    secrets: statusPageSecrets(config.api.key, sinks),
    ...(config.status.page === "off" ? {} : { detail: config.status.page }),
  });
  const running = createDaemon(config, {
    logger,
    observers: [metrics, ready.observer, statusPage.observer, ...(opts.observers ?? [])],
    apiEvents: metrics.apiEvents,
    sinks,
    notifierObserver: metrics.notifierObserver,
    leaseObserver: metrics.leaseObserver,
  });
  started.daemon = running;
  // Listening comes first, before anything is polled: an address that cannot be had stops the
  // start at once. Until the committed state is loaded and rendered, /metrics answers 503
  // (a scrape then would see the counters drop to zero).
  let metricsServed = false;
  const serving: { server?: RunningServer } = {};
  try {
    await running.start(async () => {
      serving.server = await startServer({
        listen: config.listen,
        metrics,
        // Not ready either before /metrics is served.
        notReadyReason: () =>
          metricsServed ? ready.reason() : "the committed state is being loaded",
        metricsServed: () => metricsServed,
        routes: config.status.page === "off" ? {} : { "/": statusPage.handler },
        security: web,
        healthWithoutAuth: config.web.healthWithoutAuth,
      });
    });
  } catch (error) {
    // Nothing was polled; what did start is stopped, so that the process can exit.
    await running.stop().catch(() => undefined);
    await serving.server?.close();
    metrics.close();
    throw error;
  }
  const { server } = serving;
  if (server === undefined) throw new Error("the exporter's server was not started");
  // The first rendering was built before the committed state was loaded.
  await metrics.refresh();
  metricsServed = true;
  logger.info({ url: server.url }, "serving the status page, /metrics, /healthz and /readyz");

  let current = config;
  let reloading: Promise<unknown> = Promise.resolve();
  const apply = async (next: Settings): Promise<readonly string[]> => {
    const plan = planReload(current, next.config);
    // The one step that may refuse (TLS turned on or off) comes first: nothing changes then.
    server.updateAccess(next.web, plan.config.web.healthWithoutAuth);
    logger.level = plan.config.log.level;
    statusPage.setSinks(statusPageSinks(next.sinks), statusPageSecrets(config.api.key, next.sinks));
    await running.reconfigure(plan.config, next.sinks);
    current = plan.config;
    return plan.restartNeeded;
  };
  const reloadOnce = async (load: () => Promise<Settings>): Promise<ReloadOutcome> => {
    let outcome: ReloadOutcome;
    try {
      const restartNeeded = await apply(await load());
      outcome = { ok: true, restartNeeded };
    } catch (error) {
      outcome = {
        ok: false,
        problems: error instanceof ConfigError ? [...error.problems] : [(error as Error).message],
      };
    }
    loads.lastReloadSuccessful = outcome.ok;
    if (outcome.ok) {
      loads.lastSuccessMs = Date.now();
      logger.info(
        { projects: running.projects().length, sinks: current.sinks.length },
        "configuration reloaded",
      );
      if (outcome.restartNeeded.length > 0) {
        logger.warn(
          { settings: outcome.restartNeeded },
          "these settings changed but take effect only after a restart; they keep their running values",
        );
      }
    } else {
      logger.error(
        { problems: outcome.problems },
        "configuration reload failed; the running configuration is kept",
      );
    }
    await metrics.refresh();
    return outcome;
  };
  return {
    daemon: running,
    metrics,
    server,
    logger,
    reload(load) {
      const result = reloading.then(() => reloadOnce(load));
      reloading = result;
      return result;
    },
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
    const loaded = await loadFromArgs("run", HELP, argv);
    if (loaded.kind === "exit") return loaded.code;
    const { config, sinks, web } = loaded;
    const logger = createLogger(config.log.level, undefined, config.log.format);
    let exporter: RunningExporter;
    try {
      exporter = await startExporter(config, { logger, sinks, web });
    } catch (error) {
      logger.fatal(errorFields(error), "exporter could not start");
      return 1;
    }
    // Runs until a signal, or until the daemon can no longer do its job.
    const failure = await new Promise<Error | undefined>((resolve) => {
      const done = (error: Error | undefined) => {
        process.off("SIGTERM", onSignal);
        process.off("SIGINT", onSignal);
        process.off("SIGHUP", onHangup);
        resolve(error);
      };
      const onHangup = () => {
        logger.info({ signal: "SIGHUP" }, "reloading the configuration");
        void exporter.reload(loaded.reload);
      };
      const onSignal = (signal: NodeJS.Signals) => {
        logger.info({ signal }, "shutting down");
        done(undefined);
      };
      process.on("SIGTERM", onSignal);
      process.on("SIGINT", onSignal);
      process.on("SIGHUP", onHangup);
      void exporter.daemon.failed.then(done);
    });
    if (failure !== undefined) {
      logger.fatal(errorFields(failure), "exporter cannot go on; stopping");
      await exporter.stop();
      return 1;
    }
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
