/**
 * The one place that assembles the exporter from a validated configuration: the API client,
 * the state store, the daemon, the metrics, the sinks, the status page and the HTTP server,
 * and the reloads of its configuration. Commands parse flags and call `startExporter`.
 */
import {
  loadWebConfig,
  planReload,
  resolveAccounts,
  resolveSinks,
  type ResolvedAccount,
  type Config,
  type ResolvedSink,
  type Settings,
  type WebSecurity,
} from "../config/index.js";
import { systemClock, type Clock } from "../clock.js";
import { createDaemon, type Daemon, type DaemonObserver } from "../daemon/index.js";
import { createLogger, errorFields, type Logger } from "../logger.js";
import { createExporterMetrics, type ExporterMetrics } from "../metrics/index.js";
import { startServer, type RunningServer } from "../server/index.js";
import { createStatusPage, statusPageSecrets, statusPageSinks } from "../status/index.js";
import { ProjectViews } from "../sync/index.js";
import { PACKAGE, REVISION } from "../version.js";
import { apiClientFor, storeBackendFrom } from "./backend.js";
import { readiness } from "./readiness.js";
import { createReloader, type ReloadOutcome } from "./reload.js";

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

export interface ExporterOptions {
  readonly logger?: Logger;
  readonly env?: NodeJS.ProcessEnv;
  /** The accounts with their keys; by default resolved from `env`. */
  readonly accounts?: readonly ResolvedAccount[];
  readonly sinks?: readonly ResolvedSink[];
  /** The web configuration; by default read from `web.configFile`, if set. */
  readonly web?: WebSecurity | undefined;
  /** More observers of the daemon (the demo's summary). */
  readonly observers?: readonly DaemonObserver[];
  /** The process's clocks (default the system's); tests step its wall clock. */
  readonly clock?: Clock;
}

/** Starts the exporter for a validated configuration (`run`, the demo and tests). */
export async function startExporter(
  config: Config,
  opts: ExporterOptions = {},
): Promise<RunningExporter> {
  const logger = opts.logger ?? createLogger(config.log.level, undefined, config.log.format);
  // Throws a ConfigError naming a missing variable (never a secret's value).
  const sinks = opts.sinks ?? resolveSinks(config, opts.env ?? process.env);
  const accounts = opts.accounts ?? resolveAccounts(config, opts.env ?? process.env);
  const apiKeys = accounts.map((a) => a.key);
  const clock = opts.clock ?? systemClock;
  const web =
    "web" in opts || config.web.configFile === undefined
      ? opts.web
      : await loadWebConfig(config.web.configFile);

  /** What exists only once the exporter is up (the reloads and the metrics' probes ask). */
  const up: { daemon?: Daemon; server?: RunningServer } = {};
  let current = config;
  const reloader = createReloader({
    logger,
    now: () => clock.wall(),
    apply: async (next) => {
      const { daemon, server } = up;
      if (daemon === undefined || server === undefined) throw new Error("not started yet");
      const plan = planReload(current, next.config);
      // The one step that may refuse (TLS turned on or off) comes first: nothing changes then.
      server.updateAccess(next.web, plan.config.web.healthWithoutAuth);
      logger.level = plan.config.log.level;
      statusPage.setSilences(plan.config.silences);
      statusPage.setSinks(statusPageSinks(next.sinks), statusPageSecrets(apiKeys, next.sinks));
      await daemon.reconfigure(plan.config, next.sinks);
      current = plan.config;
      return plan.restartNeeded;
    },
    describe: () => ({ projects: up.daemon?.projects().length, sinks: current.sinks.length }),
    after: () => metrics.refresh(),
  });
  /** What is known of each project, shown alike by the metrics and the status page. */
  const projects = new ProjectViews({ now: () => clock.wall() });
  // The metrics render before the daemon exists (their first rendering is built at once).
  const metrics = createExporterMetrics({
    projects,
    version: PACKAGE.version,
    revision: REVISION,
    detail: config.metrics.detail,
    perProjectHistograms: config.metrics.perProjectHistograms,
    ...(config.metrics.include.length > 0 ? { include: config.metrics.include } : {}),
    exclude: config.metrics.exclude,
    accountNames: accounts.map((a) => a.name),
    accounts: () => up.daemon?.accounts,
    leases: () => up.daemon?.leases,
    configLoads: () => reloader.loads,
    onError: (error) => {
      logger.error(errorFields(error), "rendering /metrics failed; serving the previous rendering");
    },
  });
  const ready = readiness();
  const statusPage = createStatusPage({
    projects,
    version: PACKAGE.version,
    // The address of the API, or of each account's when they differ (the accounts' table shows).
    apiUrl: [...new Set(accounts.map((a) => a.url))].join(", "),
    accounts: () => up.daemon?.accounts,
    sinks: statusPageSinks(sinks),
    silences: config.silences,
    notReadyReason: () => ready.reason(),
    secrets: statusPageSecrets(apiKeys, sinks),
    now: () => clock.wall(),
    ...(config.status.page === "off" ? {} : { detail: config.status.page }),
  });
  const daemon = createDaemon(config, {
    clients: accounts.map((account) => ({
      name: account.name,
      client: apiClientFor(account, config.api, metrics.apiEvents, clock),
    })),
    backend: await storeBackendFrom(config, logger),
    logger,
    observers: [projects, metrics, ready.observer, statusPage.observer, ...(opts.observers ?? [])],
    sinks,
    notifierObserver: metrics.notifierObserver,
    leaseObserver: metrics.leaseObserver,
    clock,
  });
  up.daemon = daemon;
  // Listening comes first, before anything is polled: an address that cannot be had stops the
  // start at once. Until the committed state is loaded and rendered, /metrics answers 503
  // (a scrape then would see the counters drop to zero).
  let metricsServed = false;
  try {
    await daemon.start(async () => {
      up.server = await startServer({
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
    await daemon.stop().catch(() => undefined);
    await up.server?.close();
    metrics.close();
    throw error;
  }
  const { server } = up;
  if (server === undefined) throw new Error("the exporter's server was not started");
  // The first rendering was built before the committed state was loaded.
  await metrics.refresh();
  metricsServed = true;
  logger.info({ url: server.url }, "serving the status page, /metrics, /healthz and /readyz");

  return {
    daemon,
    metrics,
    server,
    logger,
    reload: (load) => reloader.reload(load),
    async stop() {
      await daemon.stop();
      await server.close();
      metrics.close();
    },
  };
}
