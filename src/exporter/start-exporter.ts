/**
 * The one place that assembles the exporter from a validated configuration, each part from
 * parts built before it: what hears the daemon (the project views, the metrics' counts,
 * readiness's and the status page's trackers), the daemon (the API clients, the state store),
 * what reads the daemon's parts (the metrics' exposition, readiness, the status page), the HTTP
 * server, the push of the metrics over OTLP, and the reloads of its configuration. Commands
 * parse flags and call `startExporter`.
 */
import {
  loadWebConfig,
  NO_COMPUTES,
  planReload,
  resolveAccounts,
  resolveComputes,
  resolveOtlp,
  resolveSinks,
  type ResolvedAccount,
  type ResolvedComputes,
  type ResolvedOtlp,
  type Config,
  type ResolvedSink,
  type Settings,
  type WebSecurity,
} from "../config/index.js";
import { systemClock, type Clock } from "../clock.js";
import { createDaemon, type Daemon, type DaemonObserver } from "../daemon/index.js";
import { createLogger, errorFields, type Logger } from "../logger.js";
import { countMetrics, exposeMetrics, type ExporterMetrics } from "../metrics/index.js";
import { loadWire } from "../otlp/index.js";
import {
  nudgeRoute,
  startServer,
  type RunningServer,
  type ServerOptions,
} from "../server/index.js";
import {
  createStatusPage,
  StatusTracker,
  statusPageSecrets,
  statusPageSinks,
} from "../status/index.js";
import { ProjectViews } from "../sync/index.js";
import { PACKAGE, REVISION } from "../version.js";
import { apiClientFor, storeBackendFrom } from "./backend.js";
import { readiness, ReadinessWatch, stateStoreSecrets } from "./readiness.js";
import { createReloader, startLoads, type ReloadOutcome } from "./reload.js";

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
  /** How each account's computes are probed; by default resolved from `env`. */
  readonly computes?: ResolvedComputes;
  /** The OpenTelemetry export's targets with their headers; by default resolved from `env`. */
  readonly otlp?: ResolvedOtlp | undefined;
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
  const computes = opts.computes ?? resolveComputes(config, opts.env ?? process.env);
  const otlp = opts.otlp ?? resolveOtlp(config, opts.env ?? process.env);
  const apiKeys = accounts.map((a) => a.key);
  const clock = opts.clock ?? systemClock;
  const web =
    "web" in opts || config.web.configFile === undefined
      ? opts.web
      : await loadWebConfig(config.web.configFile);

  const loads = startLoads(clock.wall());
  /** What is known of each project, shown alike by the metrics and the status page. */
  const projects = new ProjectViews({ now: () => clock.wall() });
  // What hears the daemon is built before it: the counts (its clients, notifier and lease
  // manager count into them), readiness's and the status page's trackers. What reads its parts
  // (the exposition, readiness, the page) is built after it.
  const counts = countMetrics({
    detail: config.metrics.detail,
    perProjectHistograms: config.metrics.perProjectHistograms,
    branches: config.metrics.branches,
    ...(config.metrics.include.length > 0 ? { include: config.metrics.include } : {}),
    exclude: config.metrics.exclude,
    accountNames: accounts.map((a) => a.name),
  });
  const readinessWatch = new ReadinessWatch();
  const statusTracker = new StatusTracker({ now: () => clock.wall() });
  const daemon = createDaemon(config, {
    clients: accounts.map((account) => ({
      name: account.name,
      client: apiClientFor(account, config.api, counts.apiEvents, clock),
    })),
    backend: await storeBackendFrom(config, logger),
    logger,
    observers: [projects, counts, readinessWatch, statusTracker, ...(opts.observers ?? [])],
    sinks,
    computes,
    // The alerts read names from the same views the metrics and the status page show.
    names: projects,
    notifierObserver: counts.notifierObserver,
    leaseObserver: counts.leaseObserver,
    otlp,
    otlpObserver: counts.otlpObserver,
    clock,
  });
  // Rendered before the committed state is loaded, but never served: /metrics answers 503
  // until it is.
  const metrics = exposeMetrics(counts, {
    projects,
    version: PACKAGE.version,
    revision: REVISION,
    accounts: () => daemon.accounts,
    leases: () => daemon.leases,
    configLoads: () => loads,
    onError: (error) => {
      logger.error(errorFields(error), "rendering /metrics failed; serving the previous rendering");
    },
  });
  const ready = readiness(readinessWatch, {
    accounts: () => daemon.accounts,
    storeFailure: () => daemon.leases?.heartbeatFailure,
    secrets: stateStoreSecrets(config.state.url, opts.env ?? process.env),
  });
  const statusPage = createStatusPage({
    projects,
    tracker: statusTracker,
    version: PACKAGE.version,
    // The address of the API, or of each account's when they differ (the accounts' table shows).
    apiUrl: [...new Set(accounts.map((a) => a.url))].join(", "),
    accounts: () => daemon.accounts,
    replica: () => daemon.leases,
    sinks: statusPageSinks(sinks),
    silences: config.silences,
    notReadyReason: () => ready.reason(),
    readyProblems: () => ready.problems(),
    secrets: statusPageSecrets(apiKeys, sinks, computes),
    now: () => clock.wall(),
    ...(config.status.page === "off" ? {} : { detail: config.status.page }),
  });
  const server = await startServing(daemon, metrics, () => ready.reason(), {
    readyProblems: () => ready.problems(),
    listen: config.listen,
    routes: config.status.page === "off" ? {} : { "/": statusPage.handler },
    posts: {
      "/-/nudge": nudgeRoute(
        (id) => daemon.project(id) !== undefined,
        (ids) => daemon.nudge(ids),
      ),
    },
    security: web,
    healthWithoutAuth: config.web.healthWithoutAuth,
  });
  logger.info(
    { url: server.url },
    "serving the status page, /metrics, /healthz, /readyz and POST /-/nudge",
  );
  // Once /metrics is served, for the same reason: a push before the committed state is loaded
  // would show its counters at zero.
  const metricsPush =
    otlp.metrics === undefined
      ? undefined
      : // OpenTelemetry's packages are loaded only when the metrics are pushed.
        (await loadWire()).startMetricsPush({
          target: otlp.metrics,
          resource: otlp.resource,
          families: () => metrics.families(),
          logger,
          observer: counts.otlpObserver,
          clock,
        });

  let current = config;
  const reloader = createReloader({
    loads,
    logger,
    now: () => clock.wall(),
    apply: async (next) => {
      const plan = planReload(current, next.config);
      // The one step that may refuse (TLS turned on or off) comes first: nothing changes then.
      server.updateAccess(next.web, plan.config.web.healthWithoutAuth);
      logger.level = plan.config.log.level;
      statusPage.setSilences(plan.config.silences);
      const nextComputes = next.computes ?? NO_COMPUTES;
      statusPage.setSinks(
        statusPageSinks(next.sinks),
        statusPageSecrets(apiKeys, next.sinks, nextComputes),
      );
      await daemon.reconfigure(plan.config, next.sinks, nextComputes);
      current = plan.config;
      return plan.restartNeeded;
    },
    describe: () => ({ projects: daemon.projects().length, sinks: current.sinks.length }),
    after: () => metrics.refresh(),
  });
  return {
    daemon,
    metrics,
    server,
    logger,
    reload: (load) => reloader.reload(load),
    async stop() {
      await daemon.stop();
      // After the daemon, so that the final push carries its last counts.
      await metricsPush?.stop();
      await server.close();
      metrics.close();
    },
  };
}

/**
 * Starts the daemon, listening as soon as its state store is open and before anything is
 * polled: an address that cannot be had stops the start at once. Until the committed state is
 * loaded and rendered, /metrics answers 503 (a scrape then would see the counters drop to zero).
 * A failed start stops what did start, so that the process can exit.
 */
async function startServing(
  daemon: Daemon,
  metrics: ExporterMetrics,
  notReadyReason: () => string | undefined,
  options: Omit<ServerOptions, "metrics" | "notReadyReason" | "metricsServed">,
): Promise<RunningServer> {
  let metricsServed = false;
  const started: { server?: RunningServer } = {};
  try {
    await daemon.start(async () => {
      started.server = await startServer({
        ...options,
        metrics,
        // Not ready either before /metrics is served.
        notReadyReason: () =>
          metricsServed ? notReadyReason() : "the committed state is being loaded",
        metricsServed: () => metricsServed,
      });
    });
  } catch (error) {
    await daemon.stop().catch(() => undefined);
    await started.server?.close();
    metrics.close();
    throw error;
  }
  const { server } = started;
  if (server === undefined) throw new Error("the exporter's server was not started");
  // The first rendering was built before the committed state was loaded.
  await metrics.refresh();
  metricsServed = true;
  return server;
}
