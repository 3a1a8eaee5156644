/**
 * Scenario 8 (the delivery loop at rest and on a new alert), in this process: the notifier with
 * two webhook sinks (a local receiver) over `projects` watched projects whose outboxes are empty.
 *
 * - At rest: how often the delivery looks at a project's outbox, and the process's CPU time,
 *   over a window with the notifier started and nothing pending, against the same window with
 *   nothing running (the floor), and against a rescan of every project's outbox for every sink
 *   every 250 ms (what a loop that looks instead of being told costs): the baseline, measured
 *   in the same run. CPU over a few seconds is noisy (a collection of the projects just built
 *   lands in one window or another); the looks are exact.
 * - Time to send: from a project's outbox gaining an alert (and the notifier being told) to the
 *   receiver having it, with no grouping window, each alert past the sinks' pace.
 */
import { Notifier, createSinks, nextBatch, type OutboxOwner } from "../../../src/alerts/index.js";
import { MIN_PACE_MS } from "../../../src/alerts/pipeline/lane-stages.js";
import { createLogger } from "../../../src/logger.js";
import {
  STATE_FORMAT,
  STATE_VERSION,
  addToOutbox,
  type OutboxEntry,
  type ProjectState,
} from "../../../src/store/index.js";
import { emptyTotals } from "../../../src/sync/index.js";
import { loadConfig, resolveSinks } from "../../../src/config/index.js";
import { alertsFrom } from "../../../src/alerts/rules/rules.js";
import { FAILED_OPERATION } from "../../alerts/support/failed-operation.js";
import { startReceiver } from "../../support/receiver.js";
import { sleep } from "../../support/wait.js";
import { median, quantile } from "../lib/stats.js";
import type { BenchContext } from "../lib/context.js";

export interface DeliveryPoint {
  readonly projects: number;
  readonly windowSeconds: number;
  /** CPU time (user + system) over the window, ms: the least of three windows. */
  readonly cpuMs: {
    readonly floor: number;
    readonly notifierAtRest: number;
    readonly rescanBaseline: number;
  };
  /** (notifier − floor) / (rescan − floor). */
  readonly atRestOverRescan: number;
  /** Looks at a project's outbox per second: the notifier at rest, and the rescan. */
  readonly looksPerSecond: { readonly atRest: number; readonly rescan: number };
  /** From an alert entering an outbox to the receiver having it, ms (of `alerts`). */
  readonly sendMs: { readonly p50: number; readonly p90: number };
  readonly alerts: number;
}

const SINKS = 2;
const ALERTS = 20;
/** Windows of each kind; the least CPU is kept. */
const WINDOWS = 3;

function emptyState(projectId: string): ProjectState {
  return {
    format: STATE_FORMAT,
    version: STATE_VERSION,
    projectId,
    sequence: 1,
    committedAtMs: Date.now(),
    watermark: { second: Math.floor(Date.now() / 1000), ids: [] },
    segment: null,
    tracked: [],
    totals: emptyTotals(),
    outbox: [],
    deadLetters: [],
  };
}

/** Reads of a project's state by the delivery (each a look at its outbox). */
const looks = { count: 0 };

/** An in-memory project: its state, changed as the notifier commits; reads are counted. */
function owner(projectId: string): OutboxOwner & { state: ProjectState } {
  let state = emptyState(projectId);
  return {
    projectId,
    get state() {
      looks.count += 1;
      return state;
    },
    set state(next: ProjectState) {
      state = next;
    },
    updateOutbox: (_nowMs, change) => {
      state = { ...state, ...change(state) };
      return Promise.resolve(true);
    },
  };
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

export async function measureDelivery(
  ctx: BenchContext,
  projects: number,
  windowSeconds: number,
): Promise<DeliveryPoint> {
  ctx.log(`delivery: the notifier at rest and on a new alert, ${projects} projects`);
  const receiver = await startReceiver();
  const owners = new Map(
    Array.from({ length: projects }, (_, i) => `p-${String(i)}`).map((id) => [id, owner(id)]),
  );
  const env = Object.fromEntries(
    Array.from({ length: SINKS }, (_, i) => [`BENCH_HOOK_${String(i)}`, `${receiver.url}/${i}`]),
  );
  const config = await loadConfig({
    env,
    overrides: {
      api: { key: "unused" },
      projects: ["p-0"],
      sinks: Array.from({ length: SINKS }, (_, i) => ({
        name: `hook-${String(i)}`,
        kind: "webhook",
        urlEnv: `BENCH_HOOK_${String(i)}`,
        groupWindow: 0,
      })),
    },
  });
  const sinks = createSinks(resolveSinks(config, env));
  const windowMs = windowSeconds * 1000;
  const watched = windowSeconds * WINDOWS;
  try {
    // Each window three times, the least kept: a collection lands in one or another.
    const least = async (window: () => Promise<void>) => {
      const spent: number[] = [];
      for (let i = 0; i < WINDOWS; i++) {
        const start = process.cpuUsage();
        await window();
        spent.push(cpuMs(start));
      }
      return Math.min(...spent);
    };
    const floor = await least(() => sleep(windowMs));

    const notifier = new Notifier({
      sinks,
      owner: (id) => owners.get(id),
      projects: () => owners.values(),
      logger: createLogger("silent"),
    });
    const looksBefore = looks.count;
    notifier.start();
    const atRest = await least(() => sleep(windowMs));
    const looksAtRest = looks.count - looksBefore;

    // What a loop that looks costs: every sink looks at every outbox every 250 ms.
    const looksBeforeRescan = looks.count;
    const rescan = await least(async () => {
      const until = performance.now() + windowMs;
      while (performance.now() < until) {
        for (const s of sinks) {
          const all = [...owners.values()].map((o) => ({
            projectId: o.projectId,
            outbox: o.state.outbox,
            retryAtMs: undefined,
          }));
          nextBatch(all, s.policy, performance.now());
        }
        await sleep(250);
      }
    });
    const looksRescan = looks.count - looksBeforeRescan;

    const sendMs: number[] = [];
    for (let i = 0; i < ALERTS; i++) {
      const target = owners.get(`p-${String((i * 7919) % projects)}`);
      if (target === undefined) continue;
      const entry: OutboxEntry = {
        alert: benchAlert(`bench-${String(i)}`, target.projectId),
        createdAtMs: Date.now(),
        pending: sinks.map((s) => s.sink.name),
      };
      const before = receiver.requests.length;
      const at = performance.now();
      target.state = { ...target.state, outbox: addToOutbox(target.state.outbox, [entry]).outbox };
      notifier.wake(target.projectId);
      await receiver.waitFor((r) => r.length >= before + SINKS);
      sendMs.push(performance.now() - at);
      // Past the sinks' pace: each alert arrives at a notifier at rest.
      await sleep(MIN_PACE_MS + 50);
    }
    await notifier.stop();
    return {
      projects,
      windowSeconds,
      cpuMs: { floor, notifierAtRest: atRest, rescanBaseline: rescan },
      atRestOverRescan: Math.max(0, atRest - floor) / Math.max(1e-9, rescan - floor),
      looksPerSecond: { atRest: looksAtRest / watched, rescan: looksRescan / watched },
      sendMs: { p50: median(sendMs), p90: quantile(sendMs, 0.9) },
      alerts: sendMs.length,
    };
  } finally {
    await receiver.close();
  }
}

/** A failure alert of `projectId`, with its own id. */
function benchAlert(id: string, projectId: string): OutboxEntry["alert"] {
  const [alert] = alertsFrom(
    [
      {
        kind: "ended",
        op: { ...FAILED_OPERATION, projectId },
        status: "failed",
        count: 1,
        durationSeconds: 10,
      },
    ],
    Date.now(),
    { cancelledIsFailure: false, retrying: false, recovered: true, linkTemplate: "" },
  );
  if (alert === undefined) throw new Error("no alert raised");
  return { ...alert, id };
}
