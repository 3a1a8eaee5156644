/**
 * The running exporter: wires the configuration to the API client, the state store, one
 * `ProjectSync` per project, the scheduler and the observers, and shuts them down in order.
 *
 * With the Postgres state store (`state.url`), the watched projects are shared with the other
 * replicas through leases: the lease manager claims this replica's share, and the daemon polls
 * and delivers exactly the projects it holds, each committing under its lease's fencing token.
 */
import { setMaxListeners } from "node:events";
import {
  ApiError,
  createApiClient,
  type ApiClient,
  type ApiClientEvents,
  type SkippedProject,
} from "../api/index.js";
import {
  Notifier,
  alertHook,
  createSinks,
  type NotifierObserver,
  type OutboxOwner,
} from "../alerts/index.js";
import { displayUrl, type Config, type ResolvedSink } from "../config/index.js";
import {
  LeaseManager,
  LeasedStateStore,
  defaultReplicaId,
  type LeaseObserver,
} from "../leases/index.js";
import { FileStateStore, StateDirectoryInUseError, type StateStore } from "../store/index.js";
import { LeaseLostError } from "../store/fencing.js";
import { PostgresStateStore } from "../store/postgres-store.js";
import { Scheduler } from "../scheduler/index.js";
import {
  ANOMALY_MEANING,
  ProjectSync,
  broadcast,
  type DaemonObserver,
  type PollOptions,
  type Transition,
} from "../sync/index.js";

import { forEachBounded } from "./bounded.js";
import { ENDINGS_LOGGED_EACH, planTransitionLog, transitionFields } from "./transition-log.js";
import type { Logger } from "../logger.js";
import { errorFields } from "../logger.js";

/** Committed states read at once at start-up (and when leases bring new projects). */
const LOAD_CONCURRENCY = 16;

export interface DaemonDependencies {
  readonly logger: Logger;
  readonly observers?: readonly DaemonObserver[];
  /** Hooks into the API client (request metrics). */
  readonly apiEvents?: ApiClientEvents;
  readonly store?: StateStore;
  /** The alert sinks with their secrets (see `resolveSinks`); none means no alerts. */
  readonly sinks?: readonly ResolvedSink[];
  /** Hears the notifier (delivery metrics). */
  readonly notifierObserver?: NotifierObserver;
  /** Hears the lease manager (lease metrics; Postgres state store only). */
  readonly leaseObserver?: LeaseObserver;
  /** This replica's id among those sharing a Postgres store (default: host, pid, random). */
  readonly replicaId?: string;
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

export function createDaemon(config: Config, deps: DaemonDependencies): Daemon {
  const log = deps.logger;
  const now = deps.now ?? Date.now;
  const notify = broadcast(deps.observers ?? [], (error) => {
    log.error(errorFields(error), "an observer failed");
  });
  const client = createApiClient({
    apiKey: config.api.key,
    baseUrl: config.api.url,
    retry: { maxAttempts: config.api.maxAttempts },
    // `api.timeout` bounds the whole exchange; the silences within it cannot be longer.
    timeouts: {
      headersMs: config.api.timeout * 1000,
      bodyMs: config.api.timeout * 1000,
      deadlineMs: config.api.timeout * 1000,
    },
    maxResponseBytes: config.api.maxResponseBytes,
    rateLimit: {
      requestsPerMinute: config.api.requestsPerMinute,
      burst: config.api.burstPerSecond,
      maxConcurrency: config.api.concurrency,
    },
    ...(deps.apiEvents === undefined ? {} : { events: deps.apiEvents }),
  });
  const store = deps.store ?? createStore(config, log);
  let pollOptions = pollOptionsFrom(config, deps.sinks);
  /** The live settings (a reload changes them); the rest of `config` stays as started. */
  let live = { projects: config.projects, discoveryInterval: config.discoveryInterval };
  const syncs = new Map<string, ProjectSync>();
  /** What the notifier drains: the syncs, or with leases, views gated on each lease. */
  const owners = new Map<string, OutboxOwner>();
  /** The fencing token each project's sync commits under (Postgres store). */
  const tokens = new Map<string, number>();
  /** Each project's poll in flight, for a handover to wait for. */
  const inFlight = new Map<string, Promise<unknown>>();
  let sinkNames = (deps.sinks ?? []).map((s) => s.config.name);
  const notifier = new Notifier({
    sinks: createSinks(deps.sinks ?? []),
    projects: () => owners.values(),
    logger: log,
    now,
    ...(deps.notifierObserver === undefined ? {} : { observer: deps.notifierObserver }),
  });

  /** How long a delivery (and its acknowledgement) may take, by the slowest sink's timeout. */
  const deliveryTime = (sinks: readonly ResolvedSink[]) =>
    Math.max(0, ...sinks.map((s) => s.config.timeout * 1000)) + 2_000;
  let deliveryMs = deliveryTime(deps.sinks ?? []);
  const leases =
    store instanceof PostgresStateStore
      ? new LeaseManager({
          pool: store.controlPool,
          replicaId: deps.replicaId ?? defaultReplicaId(),
          leaseMs: config.state.leaseDuration * 1000,
          prepare: () => store.open(),
          onChange: (held) => watch(new Map([...held].map(([id, lease]) => [id, lease.token]))),
          drain: async (projectId) => {
            await inFlight.get(projectId)?.catch(() => undefined);
            // A delivery of the project's alerts chosen before it was dropped ends within its
            // sink's timeout, with its acknowledgement shortly after.
            await Promise.race([notifier.idle(), delay(deliveryMs)]);
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

  const logTransitions = (projectId: string, transitions: readonly Transition[]) => {
    const plan = planTransitionLog(transitions);
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

  const pollProject = async (projectId: string, signal: AbortSignal) => {
    const sync = syncs.get(projectId);
    if (sync === undefined) return { requests: 0, open: false };
    const started = performance.now();
    const step = sync.step(now(), signal);
    inFlight.set(projectId, step);
    const outcome = await step.finally(() => {
      if (inFlight.get(projectId) === step) inFlight.delete(projectId);
    });
    const seconds = (performance.now() - started) / 1000;
    switch (outcome.kind) {
      case "committed": {
        const { result } = outcome;
        notify.committed(projectId, result, seconds);
        if (outcome.dropped.length > 0) {
          notify.alertsDropped(projectId, outcome.dropped.length);
          log.error(
            {
              project: projectId,
              dropped: outcome.dropped.length,
              limit: config.alerts.outboxLimit,
            },
            "the alert outbox is full; new alerts were dropped",
          );
        }
        if (result.alerts.length > 0) notifier.tick();
        logTransitions(projectId, result.transitions);
        for (const { kind, count, example } of result.anomalies) {
          log.warn(
            { project: projectId, anomaly: kind, count, operation: example },
            `the API's answer was odd: ${ANOMALY_MEANING[kind]}`,
          );
        }
        log.debug(
          {
            project: projectId,
            requests: result.requests,
            transitions: result.transitions.length,
            catchingUp: result.catchingUp,
          },
          "poll committed",
        );
        return { requests: result.requests, open: sync.hasOpenOperations() };
      }
      case "blocked":
        notify.blocked(projectId, outcome.error);
        log.error(
          { project: projectId, ...errorFields(outcome.error) },
          "project state file is unusable; the project is not polled until it is moved aside",
        );
        return { requests: 0, open: false };
      case "poll_failed":
        if (signal.aborted) return { requests: 0, open: false };
        notify.pollFailed(projectId, outcome.error, seconds);
        log.warn(
          { project: projectId, ...errorFields(outcome.error) },
          "poll failed; nothing committed",
        );
        return { requests: 1, open: sync.hasOpenOperations(), slow: isTimeout(outcome.error) };
      case "commit_failed":
        notify.commitFailed(projectId, outcome.error);
        if (outcome.error instanceof LeaseLostError) {
          fenced(projectId, outcome.error, "state commit");
          return { requests: outcome.result.requests, open: false };
        }
        log.error(
          { project: projectId, ...errorFields(outcome.error) },
          "state commit failed; the poll will be repeated",
        );
        return { requests: outcome.result.requests, open: sync.hasOpenOperations() };
    }
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

  /** The notifier's view of a project: with leases, its outbox only while the lease is valid. */
  const ownerOf = (sync: ProjectSync, token: number | undefined): OutboxOwner => {
    const valid = () =>
      leases === undefined || token === undefined || leases.isValid(sync.projectId, token);
    return {
      projectId: sync.projectId,
      get state() {
        return valid() ? sync.state : undefined;
      },
      updateOutbox: async (nowMs, change) => {
        try {
          const changed = await sync.updateOutbox(nowMs, change);
          const state = sync.state;
          // Deliveries change the committed outbox between polls: the gauges follow it.
          if (changed && state !== undefined) notify.outboxChanged(sync.projectId, state);
          return changed;
        } catch (error) {
          if (error instanceof LeaseLostError) fenced(sync.projectId, error, "outbox update");
          throw error;
        }
      },
    };
  };

  /**
   * Watches exactly the projects of `wanted`, each committing under the lease token given
   * (undefined: the file store). A project claimed again under a new token starts afresh from
   * its committed state.
   */
  const watch = async (wanted: ReadonlyMap<string, number | undefined>): Promise<void> => {
    for (const id of [...syncs.keys()]) {
      if (wanted.has(id) && wanted.get(id) === tokens.get(id)) continue;
      syncs.delete(id);
      owners.delete(id);
      tokens.delete(id);
    }
    const added: ProjectSync[] = [];
    for (const [id, token] of wanted) {
      if (syncs.has(id)) continue;
      const projectStore =
        token === undefined || leases === undefined || !(store instanceof PostgresStateStore)
          ? store
          : new LeasedStateStore(store, { holder: leases.replicaId, token });
      const sync = new ProjectSync(
        id,
        projectStore,
        client,
        pollOptions,
        config.alerts.outboxLimit,
      );
      syncs.set(id, sync);
      owners.set(id, ownerOf(sync, token));
      if (token !== undefined) tokens.set(id, token);
      added.push(sync);
    }
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
    scheduler.setProjects([...syncs.keys()]);
    notify.projectsChanged([...syncs.keys()]);
  };

  /** The projects to watch: all of them, or with leases, this replica's share of them. */
  const setProjects = async (ids: readonly string[]): Promise<void> => {
    if (leases !== undefined) leases.setCandidates(ids);
    else await watch(new Map(ids.map((id) => [id, undefined])));
  };

  let fail: (error: Error) => void = () => undefined;
  const failed = new Promise<Error>((resolve) => {
    fail = resolve;
  });

  let discoveryTimer: NodeJS.Timeout | undefined;
  const discover = async (): Promise<boolean> => {
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
      if (live.projects !== "all") return true;
      await setProjects(ids);
      log.info({ projects: ids.length }, "projects discovered");
      return true;
    } catch (error) {
      notify.discoveryFailed(error);
      log.error(errorFields(error), "project discovery failed; retrying");
      return false;
    }
  };
  const scheduleDiscovery = (ok: boolean) => {
    // After a failure, try again soon; after a success, at the configured interval.
    const delay = ok
      ? live.discoveryInterval * 1000
      : Math.min(10_000, live.discoveryInterval * 1000);
    if (discoveryTimer !== undefined) clearTimeout(discoveryTimer);
    discoveryTimer = setTimeout(() => {
      discoveryTimer = undefined;
      void discover().then((done) => {
        // A reload to a list of projects stops discovery.
        if (live.projects === "all") scheduleDiscovery(done);
      });
    }, delay);
    discoveryTimer.unref();
  };
  const stopDiscovery = () => {
    if (discoveryTimer !== undefined) clearTimeout(discoveryTimer);
    discoveryTimer = undefined;
  };

  return {
    client,
    scheduler,
    store,
    notifier,
    leases,
    failed,
    projects: () => [...syncs.keys()],
    project: (id) => syncs.get(id),
    async pollAll() {
      const signal = new AbortController().signal;
      // Each request waiting for its turn listens to it (as to the scheduler's).
      setMaxListeners(0, signal);
      // As many polls at once as the scheduler runs: each walk holds its pages until it commits.
      await forEachBounded([...syncs.keys()], config.api.concurrency, (id) =>
        pollProject(id, signal),
      );
    },
    async start(ready) {
      if (store instanceof FileStateStore) {
        // A stale lock replaced (warn); the lock lost to another process (error): nothing can
        // be committed any more, so the daemon has failed.
        store.onLockEvent = (event) => {
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
      if (live.projects === "all") scheduleDiscovery(await discover());
      else await setProjects(live.projects);
      // The first heartbeat claims this replica's share before polling starts.
      await leases?.start();
      scheduler.start();
      notifier.start();
      log.info(
        {
          projects: syncs.size,
          api: displayUrl(config.api.url),
          sinks: sinkNames,
          ...(store instanceof PostgresStateStore ? { store: store.location } : {}),
          ...(leases === undefined ? {} : { replica: leases.replicaId }),
        },
        "exporter started",
      );
    },
    async reconfigure(next, sinks) {
      pollOptions = pollOptionsFrom(next, sinks);
      for (const sync of syncs.values()) sync.setOptions(pollOptions);
      await notifier.setSinks(createSinks(sinks));
      sinkNames = sinks.map((s) => s.config.name);
      deliveryMs = deliveryTime(sinks);
      const before = live;
      live = { projects: next.projects, discoveryInterval: next.discoveryInterval };
      if (live.projects === "all") {
        if (before.projects !== "all") scheduleDiscovery(await discover());
        else if (before.discoveryInterval !== live.discoveryInterval) scheduleDiscovery(true);
      } else {
        stopDiscovery();
        await setProjects(live.projects);
      }
    },
    async stop() {
      stopDiscovery();
      live = { ...live, projects: [] };
      await scheduler.stop();
      await notifier.stop();
      // Released at once, so that the other replicas take the projects over without waiting.
      await leases?.stop();
      await store.close();
      await client.close();
    },
  };
}

/** The file store, or the Postgres store when `state.url` is set. */
function createStore(config: Config, log: Logger): StateStore {
  const { url, leaseDuration, dir } = config.state;
  if (url === undefined) return new FileStateStore(dir);
  const leaseMs = leaseDuration * 1000;
  return new PostgresStateStore({
    url,
    archive: config.history === "postgres",
    maxConnections: 6,
    // A paused process cannot hold a lease row's lock for long: the server ends its
    // transaction well before the lease could be claimed by another replica.
    idleInTransactionTimeoutMs: Math.max(500, Math.floor(leaseMs / 3)),
    statementTimeoutMs: Math.max(5_000, leaseMs),
    onPoolError: (error) => {
      log.warn(errorFields(error), "a Postgres connection failed; it will be replaced");
    },
  });
}

/** A request that ran out of time: its project is slow for the scheduler. */
function isTimeout(error: unknown): boolean {
  return error instanceof ApiError && error.kind === "timeout";
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });
}
