/**
 * The daemon's parts, built in order from explicit inputs: the lease manager (this replica's
 * share, fencing), the roster of watched projects, alert delivery, each account's runner, the
 * watched projects and their discovery. `createDaemon` runs them.
 */
import type { ApiClient } from "../api/index.js";
import {
  alertHook,
  alertRouter,
  IncidentDesk,
  incidentSettings,
  type NotifierObserver,
  type OutboxOwner,
} from "../alerts/index.js";
import { systemClock, type Clock } from "../clock.js";
import { ComputeMonitor, monitorSettings } from "../computes/index.js";
import {
  accountPlans,
  NO_COMPUTES,
  type Config,
  type ResolvedComputes,
  type ResolvedSink,
} from "../config/index.js";
import type { LeaseManager, LeaseObserver } from "../leases/index.js";
import { errorFields, type Logger } from "../logger.js";
import { isEndStatus } from "../contract/index.js";
import type { Alert, ProjectState } from "../store/index.js";
import {
  broadcast,
  type DaemonObserver,
  type NameLookup,
  type PollOptions,
} from "../sync/index.js";
import { createAccountRunner, type AccountRunner } from "./account-runner.js";
import { effectsApplier } from "./apply-effects.js";
import { FleetDirectory } from "./fleet-directory.js";
import { Delivery } from "./delivery.js";
import { createLeases, fencedCommits, storeFor } from "./lease-share.js";
import { ProjectDiscovery } from "./project-discovery.js";
import { ProjectRoster } from "./project-roster.js";
import type { StoreBackend } from "./store-backend.js";
import { WatchedProjects } from "./watched-projects.js";

/** An account's API client (its own key, address and rate limiter), built by `exporter/`. */
export interface AccountClient {
  readonly name: string;
  readonly client: ApiClient;
}

export interface DaemonDependencies {
  /** One client per account of `accountPlans(config)`, by name. */
  readonly clients: readonly AccountClient[];
  readonly backend: StoreBackend;
  readonly logger: Logger;
  readonly observers?: readonly DaemonObserver[];
  /** The alert sinks with their secrets (see `resolveSinks`); none means no alerts. */
  readonly sinks?: readonly ResolvedSink[];
  /** Hears the notifier (delivery metrics). */
  readonly notifierObserver?: NotifierObserver;
  /** Hears the lease manager (lease metrics; Postgres state store only). */
  readonly leaseObserver?: LeaseObserver;
  /** The process's clocks (default the system's); tests step its wall clock. */
  readonly clock?: Clock;
  /** How each account's computes are probed (see `resolveComputes`); none: none is. */
  readonly computes?: ResolvedComputes;
  /**
   * Names beside ids for the alerts (the project views, fed by this daemon's reports); without
   * it alerts carry ids alone.
   */
  readonly names?: NameLookup;
}

export interface DaemonAssembly {
  readonly clock: Clock;
  /** Shares the projects with other replicas; undefined with the file store. */
  readonly leases: LeaseManager | undefined;
  readonly roster: ProjectRoster;
  readonly delivery: Delivery;
  /** The accounts' runners, in the configuration's order. */
  readonly accounts: readonly AccountRunner[];
  readonly watched: WatchedProjects;
  readonly discovery: ProjectDiscovery;
  /** The compute probe; it reads nothing while no account's computes are probed. */
  readonly computes: ComputeMonitor;
  /** What is shown of the projects beside their ids (names, organisations, branches). */
  readonly directory: FleetDirectory;
  /** Platform incidents: which failures group, and telling the sinks of each incident. */
  readonly incidents: IncidentDesk;
  /**
   * Routes alerts raised outside a poll from now on (a reload's sinks and silences), and
   * groups failures by a reload's incident settings.
   */
  readonly setAlertRouting: (config: Config, sinks: readonly ResolvedSink[]) => void;
}

export function pollOptionsFrom(
  config: Config,
  sinks: readonly ResolvedSink[] = [],
  names?: NameLookup,
  incidents?: IncidentDesk,
): PollOptions {
  const { poll, stuck } = config;
  const alertsFor = alertHook(config, sinks, names, incidents);
  const projectRegion = names?.projectRegion?.bind(names);
  return {
    ...(alertsFor === undefined ? {} : { alertsFor }),
    ...(projectRegion === undefined ? {} : { regionOf: projectRegion }),
    firstPageLimit: poll.firstPageLimit,
    pageLimit: poll.pageLimit,
    maxPagesPerPoll: poll.maxPagesPerPoll,
    firstStartLookbackSeconds: poll.firstStartLookback,
    backfillSeconds: poll.backfill,
    futureToleranceSeconds: poll.futureTolerance,
    maxUnknownLabelValues: config.metrics.maxUnknownValues,
    watchFailedSeconds: poll.watchFailed,
    stuckAfterSeconds: (action) => stuck.actions[action] ?? stuck.default,
  };
}

/** The endpoints of a committed state's open operations. */
function endpointsUnderWay(state: ProjectState | undefined): ReadonlySet<string> {
  const busy = new Set<string>();
  for (const t of state?.tracked ?? []) {
    if (t.endpointId !== undefined && !isEndStatus(t.status)) busy.add(t.endpointId);
  }
  return busy;
}

export function assembleDaemon(config: Config, deps: DaemonDependencies): DaemonAssembly {
  const { backend, logger } = deps;
  const clock = deps.clock ?? systemClock;
  // The compute probe hears the listings first-hand: when each arrived decides what it may read.
  const computes = new ComputeMonitor({
    settings: monitorSettings(config, deps.computes ?? NO_COMPUTES),
    accountOf: (projectId) => roster.accountOf(projectId),
    busyEndpoints: (projectId) => endpointsUnderWay(roster.sync(projectId)?.state),
    report: {
      computeChanged: (...args) => {
        notify.computeChanged(...args);
      },
      computeForgotten: (...args) => {
        notify.computeForgotten(...args);
      },
    },
    raise: (projectId, alert) => raise(projectId, alert),
    logger,
    clock,
  });
  const notify = broadcast(
    [
      ...(deps.observers ?? []),
      computes,
      {
        projectsChanged: (ids) => {
          directory.projectsChanged(ids);
        },
      },
    ],
    (error) => {
      logger.error(errorFields(error), "an observer failed");
    },
  );
  const directory = new FleetDirectory({
    notify,
    logger,
    clock,
    graceSeconds: config.discoveryGrace,
    maxBranches: config.metrics.maxBranchesPerProject,
    branchesAtStart: config.metrics.branches || config.metrics.detail === "full",
  });
  const clientOf = (account: string): ApiClient => {
    const found = deps.clients.find((c) => c.name === account);
    if (found === undefined) throw new Error(`no API client for the account ${account}`);
    return found.client;
  };

  // The lease manager comes first: the roster's stores and the fencing read it. What it calls
  // back (a new held set, a drain) reaches the parts built below, and only once it is started.
  const leases = createLeases(backend, {
    logger,
    observer: deps.leaseObserver,
    watch: (wanted) => watched.watch(wanted),
    drain: (projectId) => delivery.drained(projectId),
  });
  const fenced = fencedCommits(leases, logger);
  const incidents: IncidentDesk = new IncidentDesk({
    settings: incidentSettings(config),
    projects: (): Iterable<OutboxOwner> => roster.owners(),
    route: () => route,
    projectName: (projectId) => deps.names?.projectName(projectId),
    raised: (projectId) => {
      deliver(projectId);
    },
    logger,
    clock,
  });
  const roster: ProjectRoster = new ProjectRoster({
    sourceFor: clientOf,
    storeFor: storeFor(backend, leases),
    leaseValid: (projectId, token) => leases === undefined || leases.isValid(projectId, token),
    pollOptions: pollOptionsFrom(config, deps.sinks, deps.names, incidents),
    outboxLimit: config.alerts.outboxLimit,
    outboxHasWork: (projectId) => {
      deliver(projectId);
    },
    outboxCommitted: (projectId, state) => {
      notify.outboxChanged(projectId, state);
    },
    leaseLost: (projectId, error) => {
      fenced(projectId, error, "outbox update");
    },
  });
  const delivery = new Delivery({
    sinks: deps.sinks ?? [],
    alerts: config.alerts,
    roster,
    logger,
    clock,
    observer: deps.notifierObserver,
    names: deps.names,
  });
  const deliver = (projectId: string) => {
    delivery.notifier.wake(projectId);
  };
  const apply = effectsApplier({ notify, logger, deliver, fenced });
  /** The projects whose log the API refuses now (a refusal is logged when it starts and ends). */
  const refusedProjects = new Set<string>();
  const accounts = accountPlans(config).map((plan) =>
    createAccountRunner({
      plan,
      client: clientOf(plan.name),
      poll: config.poll,
      outboxLimit: config.alerts.outboxLimit,
      roster,
      refusedProjects,
      notify,
      apply,
      directory,
      logger,
      clock,
    }),
  );
  const watched = new WatchedProjects({
    roster,
    accounts,
    leases,
    notify,
    logger,
    clock,
    graceSeconds: config.discoveryGrace,
  });
  const discovery = new ProjectDiscovery({ accounts, watched, directory, notify, logger });

  let route = alertRouter(config, deps.sinks ?? [], deps.names);
  /** An alert raised outside a poll, routed and added to its project's outbox. */
  const raise = async (projectId: string, alert: Alert): Promise<void> => {
    const nowMs = clock.wall();
    const routed = route?.([alert], nowMs);
    if (routed === undefined || routed.entries.length === 0) return;
    const dropped = await roster.addAlerts(projectId, routed.entries, nowMs);
    if (dropped === undefined) return;
    if (dropped.length > 0) notify.alertsDropped(projectId, dropped.length);
    deliver(projectId);
  };
  const setAlertRouting = (next: Config, sinks: readonly ResolvedSink[]) => {
    route = alertRouter(next, sinks, deps.names);
    incidents.setSettings(incidentSettings(next));
  };
  return {
    clock,
    leases,
    roster,
    delivery,
    accounts,
    watched,
    discovery,
    computes,
    directory,
    incidents,
    setAlertRouting,
  };
}
