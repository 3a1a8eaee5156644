/**
 * The running exporter's engine: its parts (`assembleDaemon`) started, reconfigured and stopped
 * in order. With the Postgres state store, the watched projects are shared with the other
 * replicas through leases, and the daemon polls and delivers exactly the projects it holds.
 */
import { setMaxListeners } from "node:events";
import type { Notifier } from "../alerts/index.js";
import { monitorSettings, type ComputeMonitor } from "../computes/index.js";
import {
  accountPlans,
  displayUrl,
  NO_COMPUTES,
  type AccountPlan,
  type Config,
  type ResolvedComputes,
  type ResolvedSink,
} from "../config/index.js";
import type { LeaseManager } from "../leases/index.js";
import { errorFields, type Logger } from "../logger.js";
import { StateDirectoryInUseError, type StateStore } from "../store/index.js";
import { isRefusal, storeProblem } from "../store/postgres-problems.js";
import type { NudgeResult } from "../scheduler/index.js";
import type { ProjectSync } from "../sync/index.js";
import type { DaemonAccount } from "./account-runner.js";
import { assembleDaemon, pollOptionsFrom, type DaemonDependencies } from "./assembly.js";
import { forEachBounded } from "./bounded.js";
import type { DaemonRegistry } from "./daemon-registry.js";
import type { DiscoverySettings } from "./project-discovery.js";
import type { StoreBackend } from "./store-backend.js";

export interface Daemon {
  /** The accounts in the configuration's order (one, `default`, for the single-key settings). */
  readonly accounts: readonly DaemonAccount[];
  readonly store: StateStore;
  /** Delivers the outboxes' alerts to the configured sinks (none: it has nothing to do). */
  readonly notifier: Notifier;
  /** Shares the projects with other replicas; undefined with the file store. */
  readonly leases: LeaseManager | undefined;
  /** The compute probe (it reads nothing while no account's computes are probed). */
  readonly computes: ComputeMonitor;
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
  /** Polls the projects next, each under its account's scheduler (`Scheduler.nudge`). */
  nudge(projectIds: readonly string[]): Map<string, NudgeResult>;
  /**
   * Opens the state store, then runs `ready` (the caller starts serving: nothing has been polled
   * yet, so a failure there stops the start cleanly), then loads the projects and starts the
   * scheduler's tick and discovery.
   */
  start(ready?: () => Promise<void>): Promise<void>;
  /**
   * Applies a reloaded configuration's live settings (`planReload`): the watched projects and
   * discovery, the sinks, alert rules and routing, stuck thresholds, the compute probe. Polls
   * and probes in flight finish under the settings they started with.
   */
  reconfigure(
    next: Config,
    sinks: readonly ResolvedSink[],
    computes?: ResolvedComputes,
  ): Promise<void>;
  /** Stops polling (a poll in flight is abandoned without a commit) and releases everything. */
  stop(): Promise<void>;
}

export function createDaemon(
  config: Config,
  deps: DaemonDependencies,
  registry?: DaemonRegistry,
): Daemon {
  const { backend, logger: log } = deps;
  const assembly = assembleDaemon(config, deps);
  const { leases, roster, delivery, accounts, watched, discovery, computes } = assembly;
  const { directory, setAlertRouting } = assembly;
  registry?.fill(accounts, leases);
  const store: StateStore = backend.store;
  /** The live settings (a reload changes them); the rest of `config` stays as started. */
  let live = liveSettings(config);
  const runnerOf = (name: string) => {
    const runner = accounts.find((a) => a.name === name);
    if (runner === undefined) throw new Error(`no API client for the account ${name}`);
    return runner;
  };
  let fail: (error: Error) => void = () => undefined;
  const failed = new Promise<Error>((resolve) => {
    fail = resolve;
  });

  return {
    accounts,
    store,
    notifier: delivery.notifier,
    leases,
    computes,
    failed,
    projects: () => roster.ids(),
    project: (id) => roster.sync(id),
    nudge(projectIds) {
      const results = new Map<string, NudgeResult>(projectIds.map((id) => [id, "unknown"]));
      for (const account of accounts) {
        const mine = projectIds.filter((id) => roster.accountOf(id) === account.name);
        for (const [id, result] of account.scheduler.nudge(mine)) results.set(id, result);
      }
      return results;
    },
    async pollAll() {
      const signal = new AbortController().signal;
      // Each request waiting for its turn listens to it (as to the scheduler's).
      setMaxListeners(0, signal);
      // As many polls at once as each account's scheduler runs: each walk holds its pages until
      // it commits.
      await Promise.all(
        live.accounts.map((plan) =>
          forEachBounded(roster.idsOf(plan.name), plan.concurrency, (id) =>
            runnerOf(plan.name).poll(id, signal),
          ),
        ),
      );
    },
    async start(ready) {
      await openStore(backend, log, fail, ready);
      await discovery.follow(live.discovery);
      // The first heartbeat claims this replica's share before polling starts.
      await leases?.start();
      for (const account of accounts) account.scheduler.start();
      delivery.notifier.start();
      // Also while grouping is off (a reload may turn it on): open incidents still resolve.
      assembly.incidents.start();
      computes.start();
      log.info(
        {
          projects: roster.size,
          accounts: live.accounts.map((a) => `${a.name} (${displayUrl(a.url)})`),
          sinks: delivery.sinks.map((s) => s.config.name),
          ...(backend.kind === "postgres" ? { store: backend.store.location } : {}),
          ...(leases === undefined ? {} : { replica: leases.replicaId }),
        },
        "exporter started",
      );
    },
    async reconfigure(next, nextSinks, nextComputes) {
      roster.setPollOptions(pollOptionsFrom(next, nextSinks, deps.names, assembly.incidents));
      await delivery.setSinks(nextSinks, next.alerts);
      setAlertRouting(next, nextSinks);
      computes.reconfigure(monitorSettings(next, nextComputes ?? NO_COMPUTES));
      live = liveSettings(next);
      watched.setGrace(live.discoveryGrace);
      directory.setGrace(live.discoveryGrace);
      await discovery.follow(live.discovery);
      // A reload may have fixed what the API refused: try it again at once.
      for (const account of accounts) account.scheduler.retryRefused();
    },
    async stop() {
      await computes.stop();
      discovery.stop();
      watched.stop();
      directory.stop();
      await Promise.all(accounts.map((a) => a.scheduler.stop()));
      await assembly.incidents.stop();
      await delivery.notifier.stop();
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
function liveSettings(config: Config): {
  readonly accounts: readonly AccountPlan[];
  readonly discovery: DiscoverySettings;
  readonly discoveryGrace: number;
} {
  const accounts = accountPlans(config);
  return {
    accounts,
    discovery: { accounts, intervalSeconds: config.discoveryInterval },
    discoveryGrace: config.discoveryGrace,
  };
}

/**
 * Opens the state store, then runs `ready` (the caller starts serving: nothing has been polled
 * yet, so a failure there closes the store and stops the start). With the file store, the lock's
 * events are logged from now on, and the lock lost to another process fails the daemon.
 */
async function openStore(
  backend: StoreBackend,
  log: Logger,
  fail: (error: Error) => void,
  ready: (() => Promise<void>) | undefined,
): Promise<void> {
  if (backend.kind === "file") {
    // A stale lock replaced (warn); the lock lost to another process (error): nothing can
    // be committed any more, so the daemon has failed.
    backend.store.onLockEvent = (event) => {
      log[event.level]({ file: event.file }, event.message);
      if (event.kind === "lost") fail(new Error(event.message));
    };
  }
  try {
    await backend.store.open();
  } catch (error) {
    // Another live process holds the state directory: fatal, before anything is polled.
    if (error instanceof StateDirectoryInUseError) throw error;
    if (backend.kind === "postgres") {
      // Refused credentials, no such database, no rights, a newer build's schema: nothing will
      // ever be committed until an operator acts, so the start fails, naming the cause.
      const problem = storeProblem(error, backend.store.location);
      if (isRefusal(problem)) throw new Error(`the state store is refused: ${problem.message}`);
    }
    // Keep running: every commit will fail and be reported until the store can be used (an
    // unreachable server may come up; the lease heartbeats try again).
    log.error(errorFields(error), "state store cannot be opened; commits will fail until it can");
  }
  if (ready === undefined) return;
  try {
    await ready();
  } catch (error) {
    await backend.store.close();
    throw error;
  }
}
