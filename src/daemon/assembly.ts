/**
 * The daemon's parts, built in order from explicit inputs, each from parts built before it:
 * the observers, the fleet directory, the lease manager, the roster of watched projects, the
 * alert pipeline (incident ledger, notifier, intake, incident desk), the poll options, the
 * compute probe, each account's runner, the watched projects and their discovery. Then the
 * list of components with a lifecycle, in the order they start (`component.ts`); `createDaemon`
 * runs it.
 */
import type { ApiClient } from "../api/index.js";
import {
  AlertIntake,
  IncidentDesk,
  IncidentLedger,
  incidentSettings,
  intakeSettings,
  type NotifierObserver,
} from "../alerts/index.js";
import { systemClock, type Clock } from "../clock.js";
import { ComputeMonitor, monitorSettings } from "../computes/index.js";
import {
  accountPlans,
  NO_COMPUTES,
  type Config,
  type ResolvedComputes,
  type ResolvedOtlp,
  type ResolvedSink,
} from "../config/index.js";
import type { LeaseManager, LeaseObserver } from "../leases/index.js";
import { errorFields, type Logger } from "../logger.js";
import { isEndStatus } from "../contract/index.js";
import { SpanExport, spanHook, type OtlpObserver } from "../otlp/index.js";
import type { ProjectState } from "../store/index.js";
import {
  broadcast,
  type DaemonObserver,
  type NameLookup,
  type PollOptions,
} from "../sync/index.js";
import { createAccountRunner, type AccountRunner } from "./account-runner.js";
import { effectsApplier } from "./apply-effects.js";
import type { Component } from "./component.js";
import { FleetDirectory } from "./fleet-directory.js";
import { Delivery } from "./delivery.js";
import { createLeases, fencedCommits, leaseHolder, storeFor } from "./lease-share.js";
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
  /** The OpenTelemetry export (see `resolveOtlp`); without traces, no span is queued. */
  readonly otlp?: ResolvedOtlp;
  /** Hears the OpenTelemetry export (its metrics). */
  readonly otlpObserver?: OtlpObserver;
}

export interface DaemonAssembly {
  readonly clock: Clock;
  /** Shares the projects with other replicas; undefined with the file store. */
  readonly leases: LeaseManager | undefined;
  readonly roster: ProjectRoster;
  readonly delivery: Delivery;
  /** The accounts' runners, in the configuration's order. */
  readonly accounts: readonly AccountRunner[];
  /** The compute probe; it reads nothing while no account's computes are probed. */
  readonly computes: ComputeMonitor;
  /** Drains the span queues to the OpenTelemetry collector; undefined while traces are off. */
  readonly spans: SpanExport | undefined;
  /**
   * The parts with a lifecycle, in the order they start (after the state store is open): they
   * stop in reverse, and a reload is applied to each in this order.
   */
  readonly components: readonly Component[];
}

/**
 * The poll options of a configuration, with the intake's hook for the alerts of a poll and, while
 * spans are exported, the span hook.
 */
export function pollOptionsFrom(
  config: Config,
  alertsFor?: PollOptions["alertsFor"],
  names?: NameLookup,
  spansFor?: PollOptions["spansFor"],
): PollOptions {
  const { poll, stuck } = config;
  const projectRegion = names?.projectRegion?.bind(names);
  return {
    ...(alertsFor === undefined ? {} : { alertsFor }),
    ...(spansFor === undefined ? {} : { spansFor }),
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
  const onObserverError = (error: unknown) => {
    logger.error(errorFields(error), "an observer failed");
  };
  /** The observers from outside (metrics, status page, project views). */
  const report = broadcast(deps.observers ?? [], onObserverError);
  const directory = new FleetDirectory({
    notify: report,
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

  // The roster's stores and the fencing read the lease manager; what its held set drives is
  // given at its start (`leaseHolder`).
  const leases = createLeases(backend, { logger, observer: deps.leaseObserver });
  const fenced = fencedCommits(leases, logger);
  const roster = new ProjectRoster({
    sourceFor: clientOf,
    storeFor: storeFor(backend, leases),
    leaseValid: (projectId, token) => leases === undefined || leases.isValid(projectId, token),
    outboxLimit: config.alerts.outboxLimit,
    outboxCommitted: (projectId, state) => {
      report.outboxChanged(projectId, state);
    },
    leaseLost: (projectId, error) => {
      fenced(projectId, error, "outbox update");
    },
  });

  // The span export drains the span queues that the polls and the incident desk fill.
  const traces = deps.otlp?.traces;
  const spans =
    traces === undefined
      ? undefined
      : new SpanExport({
          target: traces,
          resource: deps.otlp?.resource ?? {},
          owner: (projectId) => roster.owner(projectId),
          projects: () => roster.owners(),
          logger,
          clock,
          observer: deps.otlpObserver,
        });
  const pipeline = alertPipeline(config, deps, { roster, spans }, report.alertsDropped, clock);
  const { delivery, intake } = pipeline;
  const polls = new PollSettings(
    config,
    intake,
    deps.names,
    spans === undefined ? undefined : spanHook(deps.names),
  );
  // The compute probe hears the listings first-hand: when each arrived decides what it may read.
  const computes = new ComputeMonitor({
    settings: monitorSettings(config, deps.computes ?? NO_COMPUTES),
    accountOf: (projectId) => roster.accountOf(projectId),
    busyEndpoints: (projectId) => endpointsUnderWay(roster.sync(projectId)?.state),
    report,
    raise: async (projectId, alert) => {
      await intake.submit(projectId, [alert]);
    },
    logger,
    clock,
  });
  /** Every observer: those from outside, the compute probe and the fleet directory. */
  const notify = broadcast([report, computes, directory], onObserverError);
  const wake = (projectId: string) => {
    delivery.notifier.wake(projectId);
    spans?.wake(projectId);
  };
  const apply = effectsApplier({ notify, logger, fenced });
  /** The projects whose log the API refuses now (a refusal is logged when it starts and ends). */
  const refusedProjects = new Set<string>();
  /** The projects whose polls fail on the API's side now (logged when it starts and ends). */
  const failingProjects = new Set<string>();
  const accounts = accountPlans(config).map((plan) =>
    createAccountRunner({
      plan,
      client: clientOf(plan.name),
      poll: config.poll,
      pollOptions: () => polls.options,
      outboxLimit: config.alerts.outboxLimit,
      roster,
      refusedProjects,
      failingProjects,
      notify,
      apply,
      wake,
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

  const components: Component[] = [
    {
      name: "accounts' clients",
      stop: () => Promise.all(accounts.map((a) => a.client.close())),
    },
    {
      name: "fleet directory",
      stop: () => {
        directory.stop();
      },
      applyConfig: ({ config: next }) => {
        directory.setGrace(next.discoveryGrace);
      },
    },
    {
      name: "watched projects",
      stop: () => {
        watched.stop();
      },
      applyConfig: ({ config: next }) => {
        watched.setGrace(next.discoveryGrace);
      },
    },
    // A reload routes what is raised, and sets the polls' options, before discovery brings in
    // the projects it adds.
    pipeline.routing,
    polls,
    // Discovery runs before the leases: their first heartbeat claims a share of what it found.
    {
      name: "discovery",
      start: () => discovery.follow(discoverySettings(config)),
      stop: () => {
        discovery.stop();
      },
      applyConfig: ({ config: next }) => discovery.follow(discoverySettings(next)),
    },
    {
      name: "leases",
      // Released at their stop, so that the other replicas take the projects over at once.
      start: () =>
        leases?.start(
          leaseHolder({
            watch: (wanted) => watched.watch(wanted),
            drain: (projectId) => delivery.drained(projectId),
          }),
        ),
      stop: () => leases?.stop(),
    },
    ...pipeline.components,
    ...(spans === undefined
      ? []
      : [
          {
            name: "span export",
            start: () => {
              spans.start();
            },
            stop: () => spans.stop(),
          },
        ]),
    {
      name: "schedulers",
      start: () => {
        for (const account of accounts) account.scheduler.start();
      },
      stop: () => Promise.all(accounts.map((a) => a.scheduler.stop())),
      // A reload may have fixed what the API refused: try it again at once.
      applyConfig: () => {
        for (const account of accounts) account.scheduler.retryRefused();
      },
    },
    {
      name: "compute probe",
      start: () => {
        computes.start();
      },
      stop: () => computes.stop(),
      applyConfig: (live) => {
        computes.reconfigure(monitorSettings(live.config, live.computes));
      },
    },
  ];
  return { clock, leases, roster, delivery, accounts, computes, spans, components };
}

/**
 * The alert pipeline: the incident ledger, the notifier's lanes, the one intake, and the
 * incident desk; the routing of what is raised (a reload's part), and the delivery's components
 * with their timers (the notifier's lanes, the desk's pass).
 */
function alertPipeline(
  config: Config,
  deps: DaemonDependencies,
  parts: { readonly roster: ProjectRoster; readonly spans: SpanExport | undefined },
  dropped: (projectId: string, count: number) => void,
  clock: Clock,
) {
  const { logger } = deps;
  const { roster, spans } = parts;
  const ledger = new IncidentLedger({
    settings: incidentSettings(config),
    projects: () => roster.owners(),
    clock,
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
  const intake = new AlertIntake({
    settings: intakeSettings(config, deps.sinks ?? []),
    names: deps.names,
    ledger,
    addAlerts: (projectId, entries, nowMs) => roster.addAlerts(projectId, entries, nowMs),
    // An outbox that gained alerts, or an incident's span queued with its resolution.
    wake: (projectId) => {
      delivery.notifier.wake(projectId);
      spans?.wake(projectId);
    },
    dropped,
    clock,
  });
  const desk = new IncidentDesk({
    ledger,
    intake,
    projects: () => roster.owners(),
    projectName: (projectId) => deps.names?.projectName(projectId),
    logger,
    clock,
    // The traces are settled at the start (a reload does not change them).
    queueSpans: spans !== undefined,
  });
  const components: Component[] = [
    {
      name: "notifier",
      start: () => {
        delivery.notifier.start();
      },
      stop: () => delivery.notifier.stop(),
      applyConfig: ({ config: next, sinks }) => delivery.setSinks(sinks, next.alerts),
    },
    {
      // Also while grouping is off (a reload may turn it on): open incidents still resolve.
      name: "incident desk",
      start: () => {
        desk.start();
      },
      stop: () => desk.stop(),
    },
  ];
  /** A reload's sinks, silences, rules and incident settings, for what is raised from now on. */
  const routing: Component = {
    name: "alert routing",
    applyConfig: ({ config: next, sinks }) => {
      intake.applyConfig(next, sinks);
      ledger.setSettings(incidentSettings(next));
    },
  };
  return { delivery, intake, routing, components };
}

/** What discovery follows of a configuration: the accounts' projects, the interval. */
function discoverySettings(config: Config) {
  return { accounts: accountPlans(config), intervalSeconds: config.discoveryInterval };
}

/**
 * The options the polls run with: a reload's from the next poll on (a poll under way keeps
 * those it started with), with the intake's hook under the routing of that moment.
 */
class PollSettings implements Component {
  readonly name = "poll options";
  #options: PollOptions;

  constructor(
    config: Config,
    private readonly intake: AlertIntake,
    private readonly names: NameLookup | undefined,
    private readonly spansFor: PollOptions["spansFor"],
  ) {
    this.#options = pollOptionsFrom(config, intake.pollHook(), names, spansFor);
  }

  get options(): PollOptions {
    return this.#options;
  }

  applyConfig({ config }: { readonly config: Config }): void {
    this.#options = pollOptionsFrom(config, this.intake.pollHook(), this.names, this.spansFor);
  }
}
