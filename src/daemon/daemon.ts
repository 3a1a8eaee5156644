/**
 * The running exporter: wires the configuration to the API client, the state store, one
 * `ProjectSync` per project, the scheduler and the observers, and shuts them down in order.
 */
import { createApiClient, type ApiClient, type ApiClientEvents } from "../api/index.js";
import { Notifier, alertHook, createSinks, type NotifierObserver } from "../alerts/index.js";
import type { Config, ResolvedSink } from "../config/index.js";
import { FileStateStore, type StateStore } from "../store/index.js";
import { Scheduler } from "../scheduler/index.js";
import { ProjectSync, type PollOptions } from "../sync/index.js";
import { broadcast, type DaemonObserver } from "./observer.js";
import type { Logger } from "../logger.js";
import { errorFields } from "../logger.js";

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
  readonly now?: () => number;
}

export interface Daemon {
  readonly client: ApiClient;
  readonly scheduler: Scheduler;
  readonly store: StateStore;
  /** Delivers the outboxes' alerts; undefined when no sink is configured. */
  readonly notifier: Notifier | undefined;
  /** The projects watched now. */
  projects(): string[];
  /** The sync of one project (for the status page and tests). */
  project(projectId: string): ProjectSync | undefined;
  /** Polls every project once now, and waits (tests and `--once`). */
  pollAll(): Promise<void>;
  /** Starts the scheduler's tick and discovery. */
  start(): Promise<void>;
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
    timeouts: { headersMs: config.api.timeout * 1000, bodyMs: config.api.timeout * 1000 },
    rateLimit: {
      requestsPerMinute: config.api.requestsPerMinute,
      burst: config.api.burstPerSecond,
      maxConcurrency: config.api.concurrency,
    },
    ...(deps.apiEvents === undefined ? {} : { events: deps.apiEvents }),
  });
  const store = deps.store ?? new FileStateStore(config.state.dir);
  const pollOptions = pollOptionsFrom(config, deps.sinks);
  const syncs = new Map<string, ProjectSync>();
  const sinks = createSinks(deps.sinks ?? []);
  const notifier =
    sinks.length === 0
      ? undefined
      : new Notifier({
          sinks,
          projects: () => syncs.values(),
          logger: log,
          now,
          ...(deps.notifierObserver === undefined ? {} : { observer: deps.notifierObserver }),
        });

  const pollProject = async (projectId: string, signal: AbortSignal) => {
    const sync = syncs.get(projectId);
    if (sync === undefined) return { requests: 0, open: false };
    const started = performance.now();
    const outcome = await sync.step(now(), signal);
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
        if (result.alerts.length > 0) notifier?.tick();
        for (const t of result.transitions) {
          if (t.kind === "new" || t.kind === "status_changed") continue;
          log.info(
            {
              project: projectId,
              operation: t.op.id,
              action: t.op.action,
              status: t.op.status,
              transition: t.kind,
            },
            `operation ${t.kind}`,
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
        return { requests: 1, open: sync.hasOpenOperations() };
      case "commit_failed":
        notify.commitFailed(projectId, outcome.error);
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
    } catch (error) {
      if (signal.aborted) return;
      notify.endpointsFailed(projectId, error);
      log.warn({ project: projectId, ...errorFields(error) }, "endpoint listing failed");
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

  const setProjects = async (ids: readonly string[]): Promise<void> => {
    const wanted = new Set(ids);
    for (const id of syncs.keys()) if (!wanted.has(id)) syncs.delete(id);
    for (const id of ids) {
      if (syncs.has(id)) continue;
      const sync = new ProjectSync(id, store, client, pollOptions, config.alerts.outboxLimit);
      syncs.set(id, sync);
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
    }
    scheduler.setProjects([...syncs.keys()]);
    notify.projectsChanged([...syncs.keys()]);
  };

  let discoveryTimer: NodeJS.Timeout | undefined;
  const discover = async (): Promise<boolean> => {
    try {
      const ids: string[] = [];
      for await (const project of client.allProjects({ limit: 400 })) ids.push(project.id);
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
      ? config.discoveryInterval * 1000
      : Math.min(10_000, config.discoveryInterval * 1000);
    discoveryTimer = setTimeout(() => void discover().then(scheduleDiscovery), delay);
    discoveryTimer.unref();
  };

  return {
    client,
    scheduler,
    store,
    notifier,
    projects: () => [...syncs.keys()],
    project: (id) => syncs.get(id),
    async pollAll() {
      const signal = new AbortController().signal;
      await Promise.all([...syncs.keys()].map((id) => pollProject(id, signal)));
    },
    async start() {
      try {
        await store.open();
      } catch (error) {
        // Keep running: every commit will fail and be reported until the directory is fixed.
        log.error(
          errorFields(error),
          "state store cannot be opened; commits will fail until it can",
        );
      }
      if (config.projects === "all") scheduleDiscovery(await discover());
      else await setProjects(config.projects);
      scheduler.start();
      notifier?.start();
      log.info(
        { projects: syncs.size, api: config.api.url, sinks: sinks.map((s) => s.sink.name) },
        "exporter started",
      );
    },
    async stop() {
      if (discoveryTimer !== undefined) clearTimeout(discoveryTimer);
      await scheduler.stop();
      await notifier?.stop();
      await store.close();
      await client.close();
    },
  };
}
