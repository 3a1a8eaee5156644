/**
 * Scenario 3, request cost.
 *
 * Per cycle: the API requests one poll of every project costs (`daemon.pollAll()`, counted by
 * the simulator), for idle projects (the physical minimum is one request), for projects with
 * an open operation on their first page, and for projects whose open operation lies below
 * 100 newer records (its page is re-read).
 *
 * Under the budget: the daemon with its default settings (30 s, 5 s for open operations,
 * endpoints every 60 s, 700 requests/minute shared) and its scheduler, against a simulator
 * that enforces the real API's rate limit; the requests per minute the simulator serves, the
 * polls per minute committed, and the poll interval that results, against the scheduler's plan.
 */
import path from "node:path";
import {
  API_KEY,
  requestRates,
  resetSimStats,
  routeRequests,
  simStats,
  sleep,
  type BenchContext,
} from "../lib/context.js";
import { withRig } from "../lib/rig.js";
import type { MemorySnapshot } from "../lib/process-stats.js";

export interface CycleCost {
  readonly projects: number;
  /** Requests per project in one poll of every idle project (minimum 1.0). */
  readonly idle: number;
  /** …with one open operation per project, on the first page (over at most 1,000 projects). */
  readonly openOnFirstPage: number;
  /** …with one open operation per project below 100 newer records. */
  readonly openBelow100: number;
  /** Wall time of one `pollAll` of the idle projects, seconds. */
  readonly idlePollAllSeconds: number;
}

/** Projects given an open operation (the others stay idle). */
const OPEN_PROJECTS = 1000;

const RUNNING_FOREVER = [
  { status: "running", after_seconds: 0 },
  { status: "finished", after_seconds: 10_000_000 },
];

export async function measureCycleCost(ctx: BenchContext, projects: number): Promise<CycleCost> {
  ctx.log(`request cost per cycle: ${projects} projects`);
  return withRig(ctx, { prefix: "cycle-" }, async ({ sim, worker, dir }) => {
    const seeded = await sim.run("seedBulk", { projects, operationsPerProject: 20 });
    const { nowMs } = await sim.run("now");
    const stateDir = path.join(dir, "state");
    await worker.run("writeStates", {
      dir: stateDir,
      projects: seeded.projectIds.map((id) => ({ id, second: Math.floor(nowMs / 1000) - 90_000 })),
    });
    await worker.run("start", {
      config: {
        api: { url: sim.apiUrl, key: API_KEY, requestsPerMinute: 1e9, burstPerSecond: 1e9 },
        projects: seeded.projectIds,
        state: { dir: stateDir },
        listen: "127.0.0.1:0",
        poll: { interval: 1e6, fastInterval: 1e6, endpointsInterval: 0 },
      },
    });
    /** One poll of every project: its requests, per project, and its wall time. */
    const cycle = async () => {
      await resetSimStats(sim);
      const { ms } = await worker.run("pollAll");
      const stats = await simStats(sim);
      const requests =
        routeRequests(stats, "listOperations") + routeRequests(stats, "getOperation");
      return { requests, perProject: requests / projects, seconds: ms / 1000 };
    };
    // The first poll reads the history; the next ones find nothing new.
    await worker.run("pollAll");
    await worker.run("pollAll");
    const idle = await cycle();
    // The open operations go to (at most) 1,000 of the projects; the others stay idle, and
    // their requests are taken out: (all requests - idle cost of the others) / those projects.
    const open = seeded.projectIds.slice(0, OPEN_PROJECTS);
    const perOpenProject = (requests: number) =>
      (requests - (projects - open.length) * idle.perProject) / open.length;

    // One open operation per project, on top of the log.
    await sim.run("script", {
      operations: open.map((projectId) => ({
        projectId,
        action: "apply_config",
        steps: RUNNING_FOREVER,
      })),
    });
    await worker.run("pollAll");
    const openOnFirstPage = await cycle();

    // 100 newer records above it: the walk stops at the checkpoint, the open one's page is read.
    await sim.run("script", {
      operations: open.flatMap((projectId) =>
        Array.from({ length: 100 }, () => ({
          projectId,
          action: "check_availability",
          steps: [{ status: "finished", after_seconds: 0 }],
        })),
      ),
    });
    await worker.run("pollAll");
    const openBelow = await cycle();
    const { tracked } = await worker.run("progress");
    if (tracked !== open.length) {
      throw new Error(`expected ${open.length} operations followed, got ${tracked}`);
    }
    await worker.run("stop");
    return {
      projects,
      idle: idle.perProject,
      openOnFirstPage: perOpenProject(openOnFirstPage.requests),
      openBelow100: perOpenProject(openBelow.requests),
      idlePollAllSeconds: idle.seconds,
    };
  });
}

export interface BudgetRun {
  readonly projects: number;
  readonly windowSeconds: number;
  /** API requests per minute the simulator served in the window (all routes). */
  readonly requestsPerMinute: number;
  /** …of which operations reads (polls) and endpoint listings. */
  readonly pollRequestsPerMinute: number;
  readonly listingRequestsPerMinute: number;
  /** Requests the simulator refused with 429 in the window. */
  readonly rateLimited: number;
  /** Polls committed per minute. */
  readonly pollsPerMinute: number;
  /** projects / polls per second: how often each project is polled, on average, seconds. */
  readonly observedIntervalSeconds: number;
  /** The scheduler's plan: base interval after stretching, and the stretch factor. */
  readonly plannedIntervalSeconds: number;
  readonly stretch: number;
  readonly demandPerMinute: number;
  readonly capacityPerMinute: number;
  /** The exporter process at the end of the run. */
  readonly memory: MemorySnapshot;
  readonly startSeconds: number;
}

/**
 * The daemon at its defaults for `projects` idle projects (first start: no state files),
 * against the real API's rate limit; measured over `windowSeconds` after `warmupSeconds`.
 */
export async function measureBudget(
  ctx: BenchContext,
  projects: number,
  warmupSeconds: number,
  windowSeconds: number,
): Promise<BudgetRun> {
  ctx.log(`requests under the budget: ${projects} projects, ${windowSeconds} s`);
  return withRig(
    ctx,
    { prefix: "budget-", sim: { rateLimit: { perMinute: 700, burstPerSecond: 40 } } },
    async ({ sim, worker, dir }) => {
      const seeded = await sim.run("seedBulk", { projects, operationsPerProject: 20 });
      const started = await worker.run("start", {
        config: {
          api: { url: sim.apiUrl, key: API_KEY },
          projects: seeded.projectIds,
          state: { dir: path.join(dir, "state") },
          listen: "127.0.0.1:0",
        },
      });
      await sleep(warmupSeconds * 1000);
      await resetSimStats(sim);
      const before = await worker.run("progress");
      const t0 = performance.now();
      await sleep(windowSeconds * 1000);
      const stats = await simStats(sim);
      const after = await worker.run("progress");
      const seconds = (performance.now() - t0) / 1000;
      const plan = await worker.run("scheduler");
      const memory = await worker.run("memory");
      await worker.run("stop");
      const perMinute = (n: number) => (n * 60) / seconds;
      const polls = after.commits - before.commits;
      return {
        projects,
        windowSeconds: seconds,
        ...requestRates(stats, perMinute),
        pollsPerMinute: perMinute(polls),
        observedIntervalSeconds: polls === 0 ? Infinity : projects / (polls / seconds),
        plannedIntervalSeconds: plan.baseIntervalSeconds,
        stretch: plan.budget.stretch,
        demandPerMinute: plan.budget.demandPerMinute,
        capacityPerMinute: plan.budget.capacityPerMinute,
        memory,
        startSeconds: started.startMs / 1000,
      };
    },
  );
}
