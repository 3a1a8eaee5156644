/**
 * The running exporter's engine: the state store, then its parts (`assembleDaemon`), started in
 * one declared order, stopped in reverse, and a reload applied to each in order. With the Postgres state store, the watched projects are shared with the other
 * replicas through leases, and the daemon polls and delivers exactly the projects it holds.
 */
import { setMaxListeners } from "node:events";
import type { Notifier } from "../alerts/index.js";
import type { ComputeMonitor } from "../computes/index.js";
import {
  accountPlans,
  displayUrl,
  NO_COMPUTES,
  type Config,
  type ResolvedComputes,
  type ResolvedSink,
} from "../config/index.js";
import type { LeaseManager } from "../leases/index.js";
import type { SpanExport } from "../otlp/index.js";
import { errorFields, type Logger } from "../logger.js";
import { StateDirectoryInUseError, type StateStore } from "../store/index.js";
import { isRefusal, storeProblem } from "../store/postgres-problems.js";
import type { NudgeResult } from "../scheduler/index.js";
import type { ProjectSync } from "../sync/index.js";
import type { DaemonAccount } from "./account-runner.js";
import { assembleDaemon, type DaemonDependencies } from "./assembly.js";
import { forEachBounded } from "./bounded.js";
import { Lifecycle, type Component } from "./component.js";
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
  /** Drains the span queues to the OpenTelemetry collector; undefined while traces are off. */
  readonly spans: SpanExport | undefined;
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

export function createDaemon(config: Config, deps: DaemonDependencies): Daemon {
  const { backend, logger: log } = deps;
  const assembly = assembleDaemon(config, deps);
  const { leases, roster, delivery, accounts, computes } = assembly;
  const store: StateStore = backend.store;
  /** The accounts as the last reload left them (a reload keeps the same accounts). */
  let plans = accountPlans(config);
  const runnerOf = (name: string) => {
    const runner = accounts.find((a) => a.name === name);
    if (runner === undefined) throw new Error(`no API client for the account ${name}`);
    return runner;
  };
  /** The parts running, from the state store's opening on (set by `start`). */
  let running: Lifecycle | undefined;

  return {
    accounts,
    store,
    notifier: delivery.notifier,
    leases,
    computes,
    spans: assembly.spans,
    // The file store's lock lost to another process: nothing can be committed any more.
    failed: backend.kind === "file" ? backend.store.lost : new Promise<Error>(() => undefined),
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
        plans.map((plan) =>
          forEachBounded(roster.idsOf(plan.name), plan.concurrency, (id) =>
            runnerOf(plan.name).poll(id, signal),
          ),
        ),
      );
    },
    async start(ready) {
      running = new Lifecycle(
        [
          stateStore(backend, log),
          // The caller starts serving: nothing has been polled yet, so a failure there stops
          // the start cleanly.
          { name: "server", ...(ready === undefined ? {} : { start: ready }) },
          ...assembly.components,
        ],
        log,
      );
      await running.start();
      log.info(
        {
          projects: roster.size,
          accounts: plans.map((a) => `${a.name} (${displayUrl(a.url)})`),
          sinks: delivery.sinks.map((s) => s.config.name),
          ...(backend.kind === "postgres" ? { store: backend.store.location } : {}),
          ...(leases === undefined ? {} : { replica: leases.replicaId }),
        },
        "exporter started",
      );
    },
    async reconfigure(next, sinks, nextComputes) {
      const live = { config: next, sinks, computes: nextComputes ?? NO_COMPUTES };
      for (const component of assembly.components) await component.applyConfig?.(live);
      plans = accountPlans(next);
    },
    async stop() {
      await running?.stop();
    },
  };
}

/**
 * The state store as a part: opened first, closed last. Refused credentials, a missing
 * database, missing rights or a newer build's schema stop the start, naming the cause; another
 * live process holding the state directory too. Anything else (an unreachable server) is ridden
 * through: every commit fails and is reported until the store can be used, and the lease
 * heartbeats try again.
 */
function stateStore(backend: StoreBackend, log: Logger): Component {
  return {
    name: "state store",
    async start() {
      try {
        await backend.store.open();
      } catch (error) {
        if (error instanceof StateDirectoryInUseError) throw error;
        if (backend.kind === "postgres") {
          const problem = storeProblem(error, backend.store.location);
          if (isRefusal(problem)) throw new Error(`the state store is refused: ${problem.message}`);
        }
        log.error(
          errorFields(error),
          "state store cannot be opened; commits will fail until it can",
        );
      }
    },
    stop: () => backend.store.close(),
  };
}
