/**
 * The running exporter's engine: given the API client and the state store (built by
 * `exporter/`), it keeps the watched projects (`ProjectRoster`), polls them on the scheduler's
 * plan, carries out what each poll leads to (`stepEffects`), delivers their alerts through the
 * notifier, discovers projects (`DiscoveryLoop`), and shuts all of it down in order.
 *
 * With the Postgres state store, the watched projects are shared with the other replicas
 * through leases: the lease manager claims this replica's share, and the daemon polls and
 * delivers exactly the projects it holds, each committing under its lease's fencing token.
 */
import { setMaxListeners } from "node:events";
import type { ApiClient, SkippedProject } from "../api/index.js";
import { Notifier, alertHook, createSinks, type NotifierObserver } from "../alerts/index.js";
import { displayUrl, type Config, type ResolvedSink } from "../config/index.js";
import { LeaseManager, LeasedStateStore, type LeaseObserver } from "../leases/index.js";
import type { Logger } from "../logger.js";
import { errorFields } from "../logger.js";
import { Scheduler } from "../scheduler/index.js";
import type { LeaseLostError } from "../store/fencing.js";
import { StateDirectoryInUseError, type StateStore } from "../store/index.js";
import {
  broadcast,
  type DaemonObserver,
  type PollOptions,
  type ProjectSync,
} from "../sync/index.js";
import { forEachBounded } from "./bounded.js";
import { DiscoveryLoop } from "./discovery-loop.js";
import { ProjectRoster } from "./project-roster.js";
import { isTimeout, stepEffects, type JobResult, type StepEffects } from "./step-effects.js";
import type { StoreBackend } from "./store-backend.js";
import { ENDINGS_LOGGED_EACH, transitionFields, type TransitionLog } from "./transition-log.js";

/** Committed states read at once at start-up (and when leases bring new projects). */
const LOAD_CONCURRENCY = 16;

export interface DaemonDependencies {
  readonly client: ApiClient;
  readonly backend: StoreBackend;
  readonly logger: Logger;
  readonly observers?: readonly DaemonObserver[];
  /** The alert sinks with their secrets (see `resolveSinks`); none means no alerts. */
  readonly sinks?: readonly ResolvedSink[];
  /** Hears the notifier (delivery metrics). */
  readonly notifierObserver?: NotifierObserver;
  /** Hears the lease manager (lease metrics; Postgres state store only). */
  readonly leaseObserver?: LeaseObserver;
  readonly now?: () => number;
}

export interface Daemon {
  readonly client: ApiClient;
  readonly scheduler: Scheduler;
  readonly store: StateStore;
  /** Delivers the outboxes' alerts to the configured sinks (none: it has nothing to do). */
  readonly notifier: Notifier;
  /** Shares the projects with other replicas; undefined with the file store. */
  readonly leases: LeaseManager | undefined;
  /**
   * Settles with the reason when the daemon can no longer do its job while it runs (its state
   * directory was taken by another process); never settles otherwise. The process should stop.
   */
  readonly failed: Promise<Error>;
  /** The projects watched now. */
  projects(): string[];
  /** The sync of one project (for the status page and tests). */
  project(projectId: string): ProjectSync | undefined;
  /** Polls every project once now, and waits (tests and `--once`). */
  pollAll(): Promise<void>;
  /**
   * Opens the state store, then runs `ready` (the caller starts serving: nothing has been polled
   * yet, so a failure there stops the start cleanly), then loads the projects and starts the
   * scheduler's tick and discovery.
   */
  start(ready?: () => Promise<void>): Promise<void>;
  /**
   * Applies a reloaded configuration's live settings (`planReload`): the watched projects and
   * discovery, the sinks, alert rules and routing, stuck thresholds. Polls in flight finish
   * under the settings they started with.
   */
  reconfigure(next: Config, sinks: readonly ResolvedSink[]): Promise<void>;
  /** Stops polling (a poll in flight is abandoned without a commit) and releases everything. */
  stop(): Promise<void>;
}

export function pollOptionsFrom(config: Config, sinks: readonly ResolvedSink[] = []): PollOptions {
  const { poll, stuck } = config;
  const alertsFor = alertHook(config, sinks);
  return {
    ...(alertsFor === undefined ? {} : { alertsFor }),
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

/** How long a delivery (and its acknowledgement) may take, by the slowest sink's timeout. */
function deliveryTimeMs(sinks: readonly ResolvedSink[]): number {
  return Math.max(0, ...sinks.map((s) => s.config.timeout * 1000)) + 2_000;
}

export function createDaemon(config: Config, deps: DaemonDependencies): Daemon {
  const { client, backend } = deps;
  const log = deps.logger;
  const now = deps.now ?? Date.now;
  const store: StateStore = backend.store;
  const notify = broadcast(deps.observers ?? [], (error) => {
    log.error(errorFields(error), "an observer failed");
  });
  /** The live settings (a reload changes them); the rest of `config` stays as started. */
  let live = { projects: config.projects, discoveryInterval: config.discoveryInterval };
  let sinks = deps.sinks ?? [];

  const roster = new ProjectRoster({
    source: client,
    storeFor: (_projectId, token) =>
      token === undefined || leases === undefined || backend.kind !== "postgres"
        ? store
        : new LeasedStateStore(backend.store, { holder: leases.replicaId, token }),
    leaseValid: (projectId, token) => leases === undefined || leases.isValid(projectId, token),
    pollOptions: pollOptionsFrom(config, sinks),
    outboxLimit: config.alerts.outboxLimit,
    outboxCommitted: (projectId, state) => {
      notify.outboxChanged(projectId, state);
    },
    leaseLost: (projectId, error) => {
      fenced(projectId, error, "outbox update");
    },
  });
  const notifier = new Notifier({
    sinks: createSinks(sinks, config.alerts),
    projects: () => roster.owners(),
    logger: log,
    now,
    ...(deps.notifierObserver === undefined ? {} : { observer: deps.notifierObserver }),
  });
  const leases =
    backend.kind === "postgres"
      ? new LeaseManager({
          pool: backend.store.controlPool,
          replicaId: backend.replicaId,
          leaseMs: backend.leaseMs,
          prepare: () => backend.store.open(),
          onChange: (held) => watch(new Map([...held].map(([id, lease]) => [id, lease.token]))),
          drain: async (projectId) => {
            await roster.settled(projectId);
            // A delivery of the project's alerts chosen before it was dropped ends within its
            // sink's timeout, with its acknowledgement shortly after.
            await Promise.race([notifier.idle(), delay(deliveryTimeMs(sinks))]);
          },
          logger: log,
          ...(deps.leaseObserver === undefined ? {} : { observer: deps.leaseObserver }),
        })
      : undefined;

  /** A commit was fenced: this replica no longer holds the project. */
  const fenced = (projectId: string, error: LeaseLostError, what: string) => {
    log.warn(
      {
        project: projectId,
        replica: leases?.replicaId,
        token: error.fence?.token,
        reason: error.reason,
        ...errorFields(error),
      },
      `${what} rejected: this replica no longer holds the project's lease (fencing); nothing was written`,
    );
    if (leases !== undefined && error.fence !== undefined) {
      leases.fenced(projectId, error.fence.token, error.reason);
    }
  };

  const logTransitions = (projectId: string, plan: TransitionLog) => {
    for (const t of plan.each) log.info(transitionFields(projectId, t), `operation ${t.kind}`);
    if (plan.summary === undefined) return;
    log.info(
      { project: projectId, ...plan.summary },
      `${plan.summary.ended} operations ended (one line for more than ${ENDINGS_LOGGED_EACH} in a poll; each at debug)`,
    );
    if (log.isLevelEnabled("debug")) {
      for (const t of plan.summarised) {
        log.debug(transitionFields(projectId, t), `operation ${t.kind}`);
      }
    }
  };

  /** Carries out what a poll led to. */
  const apply = (projectId: string, effects: StepEffects): JobResult => {
    for (const report of effects.reports) {
      switch (report.event) {
        case "committed":
          notify.committed(projectId, report.result, report.durationSeconds);
          break;
        case "alertsDropped":
          notify.alertsDropped(projectId, report.count);
          break;
        case "blocked":
          notify.blocked(projectId, report.error);
          break;
        case "pollFailed":
          notify.pollFailed(projectId, report.error, report.durationSeconds);
          break;
        case "commitFailed":
          notify.commitFailed(projectId, report.error);
          break;
      }
    }
    if (effects.deliver) notifier.tick();
    if (effects.transitions !== undefined) logTransitions(projectId, effects.transitions);
    for (const line of effects.logs) log[line.level](line.fields, line.message);
    if (effects.leaseLost !== undefined) fenced(projectId, effects.leaseLost, "state commit");
    return effects.job;
  };

  const pollProject = async (projectId: string, signal: AbortSignal) => {
    const started = performance.now();
    const outcome = await roster.step(projectId, now(), signal);
    if (outcome === undefined) return { requests: 0, open: false };
    const effects = stepEffects(outcome, {
      projectId,
      durationSeconds: (performance.now() - started) / 1000,
      aborted: signal.aborted,
      open: roster.sync(projectId)?.hasOpenOperations() ?? false,
      outboxLimit: config.alerts.outboxLimit,
    });
    return apply(projectId, effects);
  };

  const listEndpoints = async (projectId: string, signal: AbortSignal) => {
    try {
      notify.endpointsListed(projectId, await client.listEndpoints(projectId, { signal }));
      return { slow: false };
    } catch (error) {
      if (signal.aborted) return undefined;
      notify.endpointsFailed(projectId, error);
      log.warn({ project: projectId, ...errorFields(error) }, "endpoint listing failed");
      return { slow: isTimeout(error) };
    }
  };

  const scheduler = new Scheduler(
    {
      baseIntervalSeconds: config.poll.interval,
      fastIntervalSeconds: config.poll.fastInterval,
      endpointsIntervalSeconds: config.poll.endpointsInterval,
      jitter: config.poll.jitter,
      headroom: config.poll.headroom,
      requestsPerMinute: config.api.requestsPerMinute,
      maxConcurrent: config.api.concurrency,
      now,
    },
    { poll: pollProject, listEndpoints },
  );

  /**
   * Watches exactly the projects of `wanted`, each committing under the lease token given
   * (undefined: no leases), and loads the committed states of those that are new.
   */
  const watch = async (wanted: ReadonlyMap<string, number | undefined>): Promise<void> => {
    const added = roster.watch(wanted);
    // Reading the committed states a few at a time, not one by one: start-up with thousands
    // of projects waits on the disk (or the database), not on the CPU.
    await forEachBounded(added, LOAD_CONCURRENCY, async (sync) => {
      const id = sync.projectId;
      const status = await sync.load();
      if (status.kind === "ready" && status.state !== undefined) {
        notify.stateLoaded(id, status.state);
        if (status.bucketsReset === true) {
          log.warn(
            { project: id },
            "state file was written with other duration buckets; the histogram's buckets restart from zero (counts and sums are kept)",
          );
        }
      }
      if (status.kind === "blocked") {
        notify.blocked(id, status.error);
        log.error(
          { project: id, ...errorFields(status.error) },
          "project state file is unusable; move it aside to start this project afresh",
        );
      }
    });
    scheduler.setProjects(roster.ids());
    notify.projectsChanged(roster.ids());
  };

  /** The projects to watch: all of them, or with leases, this replica's share of them. */
  const setProjects = async (ids: readonly string[]): Promise<void> => {
    if (leases !== undefined) leases.setCandidates(ids);
    else await watch(new Map(ids.map((id) => [id, undefined])));
  };

  const discovery = new DiscoveryLoop(async (current) => {
    try {
      const ids: string[] = [];
      const onSkipped = (skipped: SkippedProject) => {
        log.warn(
          { project: skipped.id, problem: skipped.problem },
          "project discovery skipped an entry that is not a usable project; the others are watched",
        );
      };
      for await (const project of client.allProjects({ limit: 400, onSkipped })) {
        ids.push(project.id);
      }
      // A reload to a list of projects (or a stop) while this discovery ran: the list wins.
      if (!current()) return true;
      await setProjects(ids);
      log.info({ projects: ids.length }, "projects discovered");
      return true;
    } catch (error) {
      notify.discoveryFailed(error);
      log.error(errorFields(error), "project discovery failed; retrying");
      return false;
    }
  });

  /** Watches the configured list of projects, or discovers them all. */
  const follow = async (projects: Config["projects"], intervalSeconds: number) => {
    if (projects === "all") {
      if (discovery.running) discovery.setInterval(intervalSeconds);
      else await discovery.start(intervalSeconds);
    } else {
      discovery.stop();
      await setProjects(projects);
    }
  };

  let fail: (error: Error) => void = () => undefined;
  const failed = new Promise<Error>((resolve) => {
    fail = resolve;
  });

  return {
    client,
    scheduler,
    store,
    notifier,
    leases,
    failed,
    projects: () => roster.ids(),
    project: (id) => roster.sync(id),
    async pollAll() {
      const signal = new AbortController().signal;
      // Each request waiting for its turn listens to it (as to the scheduler's).
      setMaxListeners(0, signal);
      // As many polls at once as the scheduler runs: each walk holds its pages until it commits.
      await forEachBounded(roster.ids(), config.api.concurrency, (id) => pollProject(id, signal));
    },
    async start(ready) {
      if (backend.kind === "file") {
        // A stale lock replaced (warn); the lock lost to another process (error): nothing can
        // be committed any more, so the daemon has failed.
        backend.store.onLockEvent = (event) => {
          log[event.level]({ file: event.file }, event.message);
          if (event.kind === "lost") fail(new Error(event.message));
        };
      }
      try {
        await store.open();
      } catch (error) {
        // Another live process holds the state directory: fatal, before anything is polled.
        if (error instanceof StateDirectoryInUseError) throw error;
        // Keep running: every commit will fail and be reported until the directory is fixed.
        log.error(
          errorFields(error),
          "state store cannot be opened; commits will fail until it can",
        );
      }
      if (ready !== undefined) {
        try {
          await ready();
        } catch (error) {
          await store.close();
          throw error;
        }
      }
      await follow(live.projects, live.discoveryInterval);
      // The first heartbeat claims this replica's share before polling starts.
      await leases?.start();
      scheduler.start();
      notifier.start();
      log.info(
        {
          projects: roster.size,
          api: displayUrl(config.api.url),
          sinks: sinks.map((s) => s.config.name),
          ...(backend.kind === "postgres" ? { store: backend.store.location } : {}),
          ...(leases === undefined ? {} : { replica: leases.replicaId }),
        },
        "exporter started",
      );
    },
    async reconfigure(next, nextSinks) {
      roster.setPollOptions(pollOptionsFrom(next, nextSinks));
      await notifier.setSinks(createSinks(nextSinks, next.alerts));
      sinks = nextSinks;
      live = { projects: next.projects, discoveryInterval: next.discoveryInterval };
      await follow(live.projects, live.discoveryInterval);
    },
    async stop() {
      discovery.stop();
      await scheduler.stop();
      await notifier.stop();
      // Released at once, so that the other replicas take the projects over without waiting.
      await leases?.stop();
      await store.close();
      await client.close();
    },
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });
}
