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
import type { ApiClient } from "../api/index.js";
import { systemClock, type Clock } from "../clock.js";
import { Notifier, alertHook, createSinks, type NotifierObserver } from "../alerts/index.js";
import {
  accountPlans,
  displayUrl,
  isDiscovered,
  type AccountPlan,
  type Config,
  type ResolvedSink,
} from "../config/index.js";
import { LeaseManager, LeasedStateStore, type LeaseObserver } from "../leases/index.js";
import type { Logger } from "../logger.js";
import { errorFields } from "../logger.js";
import { Scheduler, type JobOutcome } from "../scheduler/index.js";
import type { LeaseLostError } from "../store/fencing.js";
import { StateDirectoryInUseError, type StateStore } from "../store/index.js";
import {
  broadcast,
  type DaemonObserver,
  type PollOptions,
  type ProjectSync,
} from "../sync/index.js";
import { discoverAccountProjects } from "./account-discovery.js";
import { forEachBounded } from "./bounded.js";
import { Departures } from "./departures.js";
import { DiscoveryLoop } from "./discovery-loop.js";
import { assignOwners, type AccountFinding } from "./project-owners.js";
import { ProjectRoster, type WatchTerms } from "./project-roster.js";
import {
  isTimeout,
  refusalOf,
  stepEffects,
  type JobResult,
  type StepEffects,
} from "./step-effects.js";
import type { StoreBackend } from "./store-backend.js";
import { ENDINGS_LOGGED_EACH, transitionFields, type TransitionLog } from "./transition-log.js";

/** Committed states read at once at start-up (and when leases bring new projects). */
const LOAD_CONCURRENCY = 16;

/** An account's API client (its own key, address and rate limiter), built by `exporter/`. */
export interface AccountClient {
  readonly name: string;
  readonly client: ApiClient;
}

/** An account as the daemon runs it: its client, and its scheduler planning its budget. */
export interface DaemonAccount {
  readonly name: string;
  /** The API's base address for this account (may hold credentials: show with `displayUrl`). */
  readonly url: string;
  readonly client: ApiClient;
  readonly scheduler: Scheduler;
  /** The projects watched now under this account. */
  projects(): string[];
  /** While the API refuses the account's key: since when, and what it said. */
  keyRefusal(): KeyRefusal | undefined;
}

/** The API refuses an account's key (401). */
export interface KeyRefusal {
  /** Wall-clock time of the first refusal in a row (epoch ms). */
  readonly sinceMs: number;
  /** The API's answer. */
  readonly message: string;
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
}

export interface Daemon {
  /** The accounts in the configuration's order (one, `default`, for the single-key settings). */
  readonly accounts: readonly DaemonAccount[];
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
  const { backend } = deps;
  const log = deps.logger;
  const clock = deps.clock ?? systemClock;
  const store: StateStore = backend.store;
  const notify = broadcast(deps.observers ?? [], (error) => {
    log.error(errorFields(error), "an observer failed");
  });
  /** The live settings (a reload changes them); the rest of `config` stays as started. */
  let live = liveSettings(config);
  let sinks = deps.sinks ?? [];
  const clientOf = (account: string): ApiClient => {
    const found = deps.clients.find((c) => c.name === account);
    if (found === undefined) throw new Error(`no API client for the account ${account}`);
    return found.client;
  };
  /** The account that watches each project (the first in the configuration that has it). */
  let owners: ReadonlyMap<string, string> = new Map();
  /** Each discovered account's last successful listing: a failed one keeps the previous. */
  const discovered = new Map<string, readonly string[]>();
  const departures = new Departures();
  let departuresTimer: NodeJS.Timeout | undefined;

  const roster = new ProjectRoster({
    sourceFor: clientOf,
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
    clock,
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

  /** Each account whose key the API refuses now (what the metrics and the status page show). */
  const keyRefusals = new Map<string, KeyRefusal>();
  const noteKey = (account: string, outcome: JobOutcome | undefined, error?: unknown) => {
    if (outcome?.refused === "key" && !keyRefusals.has(account)) {
      const message = error instanceof Error ? error.message : String(error);
      keyRefusals.set(account, { sinceMs: clock.wall(), message });
    } else if (outcome?.answered === true) keyRefusals.delete(account);
  };

  /** The projects whose log the API refuses now (a refusal is logged when it starts and ends). */
  const refusedProjects = new Set<string>();

  const pollProject = async (account: string, projectId: string, signal: AbortSignal) => {
    const started = clock.monotonic();
    const outcome = await roster.step(projectId, clock.wall(), signal);
    if (outcome === undefined) return { requests: 0, open: false };
    const effects = stepEffects(outcome, {
      projectId,
      account,
      // Read when the poll ends: of polls that were refused together, the first says so.
      projectRefused: refusedProjects.has(projectId),
      keyRefused: keyRefusals.has(account),
      durationSeconds: (clock.monotonic() - started) / 1000,
      aborted: signal.aborted,
      open: roster.sync(projectId)?.hasOpenOperations() ?? false,
      outboxLimit: config.alerts.outboxLimit,
    });
    noteKey(account, effects.job, outcome.kind === "poll_failed" ? outcome.error : undefined);
    if (effects.job.refused === "project") refusedProjects.add(projectId);
    else if (effects.job.answered === true) refusedProjects.delete(projectId);
    return apply(projectId, effects);
  };

  const listEndpoints = async (
    account: string,
    projectId: string,
    signal: AbortSignal,
  ): Promise<JobOutcome | undefined> => {
    try {
      const listed = await clientOf(account).listEndpoints(projectId, { signal });
      notify.endpointsListed(projectId, listed);
      noteKey(account, { answered: true });
      return { slow: false, answered: true };
    } catch (error) {
      if (signal.aborted) return undefined;
      notify.endpointsFailed(projectId, error);
      const refused = refusalOf(error);
      // A refusal is logged by the polls (when one starts and when it ends).
      if (refused !== undefined) {
        noteKey(account, { refused }, error);
        return { refused };
      }
      log.warn({ project: projectId, ...errorFields(error) }, "endpoint listing failed");
      return { slow: isTimeout(error) };
    }
  };

  /** Each account plans its own projects within its own rate limit (the API's is per account). */
  const accounts: DaemonAccount[] = accountPlans(config).map((plan: AccountPlan) => {
    const client = clientOf(plan.name);
    const scheduler = new Scheduler(
      {
        baseIntervalSeconds: config.poll.interval,
        fastIntervalSeconds: config.poll.fastInterval,
        endpointsIntervalSeconds: config.poll.endpointsInterval,
        jitter: config.poll.jitter,
        headroom: config.poll.headroom,
        requestsPerMinute: plan.requestsPerMinute,
        maxConcurrent: plan.concurrency,
        monotonic: () => clock.monotonic(),
      },
      {
        poll: (projectId, signal) => pollProject(plan.name, projectId, signal),
        listEndpoints: (projectId, signal) => listEndpoints(plan.name, projectId, signal),
      },
    );
    return {
      name: plan.name,
      url: plan.url,
      client,
      scheduler,
      projects: () => roster.idsOf(plan.name),
      keyRefusal: () => keyRefusals.get(plan.name),
    };
  });

  /**
   * Tells the observers which projects to show: the watched ones, and those discovery no longer
   * finds while their grace lasts; wakes up again when the next grace ends.
   */
  const publish = () => {
    const graceMs = live.discoveryGrace * 1000;
    const lingering = departures.lingering(clock.monotonic(), graceMs);
    notify.projectsChanged([...roster.ids(), ...lingering]);
    if (departuresTimer !== undefined) clearTimeout(departuresTimer);
    departuresTimer = undefined;
    const next = departures.nextExpiryMs(graceMs);
    if (next !== undefined) {
      departuresTimer = setTimeout(publish, Math.max(0, next - clock.monotonic()) + 10);
      departuresTimer.unref();
    }
  };

  /**
   * Watches exactly the projects of `wanted`, each under its owning account and committing
   * under the lease token given (undefined: no leases), and loads the committed states of
   * those that are new.
   */
  const watch = async (wanted: ReadonlyMap<string, number | undefined>): Promise<void> => {
    const terms = new Map<string, WatchTerms>();
    for (const [id, token] of wanted) {
      const account = owners.get(id);
      if (account !== undefined) terms.set(id, { account, token });
    }
    const added = roster.watch(terms);
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
    for (const account of accounts) account.scheduler.setProjects(roster.idsOf(account.name));
    publish();
  };

  /** Warned once per project and accounts: discovery repeats every interval. */
  const sharedWarned = new Set<string>();

  /**
   * The projects to watch, from what each account lists or discovered: each under the first
   * account that has it; all of them, or with leases, this replica's share of them. With
   * `departing`, a project no longer found stops being polled and lingers for the grace.
   */
  const setProjects = async (
    findings: readonly AccountFinding[],
    departing: boolean,
  ): Promise<void> => {
    const assigned = assignOwners(findings);
    for (const shared of assigned.shared) {
      const key = `${shared.projectId} ${shared.watchedBy} ${shared.alsoSeenBy.join(",")}`;
      if (sharedWarned.has(key)) continue;
      sharedWarned.add(key);
      log.warn(
        { project: shared.projectId, account: shared.watchedBy, alsoSeenBy: shared.alsoSeenBy },
        "a project is seen under several accounts; it is watched once, under the first",
      );
    }
    if (departing) {
      departures.departed(
        roster.ids().filter((id) => !assigned.owners.has(id)),
        clock.monotonic(),
      );
    }
    departures.returned(assigned.owners.keys());
    owners = assigned.owners;
    const ids = [...owners.keys()];
    if (leases !== undefined) {
      leases.setCandidates(ids);
      // Projects this replica held and no longer may stop now; new ones come with the leases.
      await watch(new Map([...leases.held()].map(([id, lease]) => [id, lease.token])));
    } else await watch(new Map(ids.map((id) => [id, undefined])));
  };

  /** What each account lists by hand, and what its last successful discovery found. */
  const findings = (): AccountFinding[] =>
    live.accounts.map((plan) => ({
      account: plan.name,
      projectIds: [...plan.projects.ids, ...(discovered.get(plan.name) ?? [])],
    }));

  const discovery = new DiscoveryLoop(async (current) => {
    const failures: { account: string; error: unknown }[] = [];
    for (const plan of live.accounts.filter((a) => isDiscovered(a.projects))) {
      try {
        const ids = await discoverAccountProjects(
          clientOf(plan.name),
          plan.projects,
          (skipped, orgId) => {
            log.warn(
              { account: plan.name, org: orgId, project: skipped.id, problem: skipped.problem },
              "project discovery skipped an entry that is not a usable project; the others are watched",
            );
          },
        );
        discovered.set(plan.name, ids);
        log.info({ account: plan.name, projects: ids.length }, "projects discovered");
        // The key works, and the projects listed exist: what was refused is tried at once.
        accounts.find((a) => a.name === plan.name)?.scheduler.retryRefused();
      } catch (error) {
        failures.push({ account: plan.name, error });
        log.error(
          { account: plan.name, ...errorFields(error) },
          "project discovery failed; its projects found before are kept, and it is retried",
        );
      }
    }
    // A reload to a list of projects (or a stop) while this discovery ran: the list wins.
    if (current()) await setProjects(findings(), true);
    // Told after the new list (which clears the status page's banner), so that they stay shown
    // until the next discovery.
    for (const { account, error } of failures) notify.discoveryFailed(error, account);
    return !current() || failures.length === 0;
  });

  /** Watches the listed projects, and discovers those of `all` and organisations. */
  const follow = async () => {
    if (live.accounts.some((a) => isDiscovered(a.projects))) {
      if (discovery.running) {
        discovery.setInterval(live.discoveryInterval);
        await setProjects(findings(), false);
      } else await discovery.start(live.discoveryInterval);
    } else {
      discovery.stop();
      discovered.clear();
      await setProjects(findings(), false);
    }
  };

  let fail: (error: Error) => void = () => undefined;
  const failed = new Promise<Error>((resolve) => {
    fail = resolve;
  });

  return {
    accounts,
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
      // As many polls at once as each account's scheduler runs: each walk holds its pages until
      // it commits.
      await Promise.all(
        live.accounts.map((plan) =>
          forEachBounded(roster.idsOf(plan.name), plan.concurrency, (id) =>
            pollProject(plan.name, id, signal),
          ),
        ),
      );
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
      await follow();
      // The first heartbeat claims this replica's share before polling starts.
      await leases?.start();
      for (const account of accounts) account.scheduler.start();
      notifier.start();
      log.info(
        {
          projects: roster.size,
          accounts: live.accounts.map((a) => `${a.name} (${displayUrl(a.url)})`),
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
      live = liveSettings(next);
      await follow();
      // A reload may have fixed what the API refused: try it again at once.
      for (const account of accounts) account.scheduler.retryRefused();
    },
    async stop() {
      discovery.stop();
      if (departuresTimer !== undefined) clearTimeout(departuresTimer);
      await Promise.all(accounts.map((a) => a.scheduler.stop()));
      await notifier.stop();
      // Released at once, so that the other replicas take the projects over without waiting.
      await leases?.stop();
      await store.close();
      await Promise.all(accounts.map((a) => a.client.close()));
    },
  };
}

/**
 * What a reload may change in what the daemon watches: the single-key projects, the discovery
 * interval and grace. The accounts themselves (keys, addresses, limiters) wait for a restart,
 * so a reloaded configuration always names the same accounts.
 */
function liveSettings(config: Config) {
  return {
    accounts: accountPlans(config),
    discoveryInterval: config.discoveryInterval,
    discoveryGrace: config.discoveryGrace,
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });
}
