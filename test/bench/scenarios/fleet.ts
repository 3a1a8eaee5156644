/**
 * Scenarios 3 (under the budget), 4 and 5 (memory), from one run of the daemon as it runs in
 * production: its scheduler, its default settings (polls every 30 s, every 5 s while
 * operations are open, endpoints every 60 s, 700 requests/minute with bursts of 40, a webhook
 * sink with its 5 s grouping window), `projects` projects in a simulator with a real clock,
 * and failures injected at random moments while it runs.
 *
 * Figures: the requests per minute the simulator served, the polls per minute committed, the
 * poll interval that results (observed: projects / polls per second; planned: the scheduler's
 * stretched interval), the detection latency of each failure (from the instant the simulator
 * failed the operation to the webhook receiver's 2xx), and the exporter's memory.
 *
 * Time compression. At 1,000 projects the budget stretches the poll interval to 143 s, at
 * 10,000 to 24 minutes: too long to watch in a benchmark. With `compression` k, every duration
 * of the exporter's configuration is divided by k and the budget multiplied by k (the sink's
 * grouping window too, and the injected operations' durations), and so is `api.concurrency`:
 * requests in flight are the request rate times the time each takes, and that time does not
 * shrink with k (at 40x, 8 requests in flight would cap the rate at a loaded simulator's pace).
 * The run is then the same run k times faster, and its figures are reported back at real scale
 * (per minute / k, seconds * k). What does not scale: the length of the scheduler's tick (1 s),
 * the notifier's (250 ms) and the cost of each request, which stay small against the compressed
 * intervals. k = 1 is a real-time run.
 */
import path from "node:path";
import { seededRandom } from "../../support/random.js";
import { startReceiver } from "../../support/receiver.js";
import type { StatsView } from "../../../src/simulator/index.js";
import {
  API_KEY,
  compressedApi,
  resetSimStats,
  requestRates,
  routeRequests,
  simStats,
  sleep,
  startPollerBaseline,
  type BenchContext,
} from "../lib/context.js";
import { withRig } from "../lib/rig.js";
import type { MemorySnapshot } from "../lib/process-stats.js";
import type { PollerResult } from "../workers/poller-baseline.js";
import { percentiles, type Percentiles } from "../lib/stats.js";

export interface FleetOptions {
  readonly projects: number;
  /** Time compression factor k (1 = real time). */
  readonly compression: number;
  /** Failures to inject. */
  readonly failures: number;
}

/** The default settings the run compresses (seconds, and requests per minute). */
const DEFAULTS = {
  interval: 30,
  fastInterval: 5,
  endpointsInterval: 60,
  requestsPerMinute: 700,
  burstPerSecond: 40,
  groupWindow: 5,
  concurrency: 8,
} as const;

/** The memory baseline runs as long as the measured window, and at most this long. */
const BASELINE_MAX_SECONDS = 40;

/** The first page of each log, the exporter's and the memory baseline's (the default). */
const FIRST_PAGE_LIMIT = 50;

/** Injected operations run this long (real-scale seconds) before they fail. */
const FAILS_AFTER = { min: 1, max: 30 } as const;

export interface FleetRun {
  readonly projects: number;
  readonly compression: number;
  /** Real-scale figures (raw / k, or raw * k). */
  readonly requestsPerMinute: number;
  readonly pollRequestsPerMinute: number;
  readonly listingRequestsPerMinute: number;
  readonly pollsPerMinute: number;
  readonly observedIntervalSeconds: number;
  readonly plannedIntervalSeconds: number;
  readonly plannedFastIntervalSeconds: number;
  readonly stretch: number;
  readonly demandPerMinute: number;
  readonly capacityPerMinute: number;
  /** Requests the simulator answered with 429 (the client keeps under the limit: 0). */
  readonly rateLimited: number;
  /** How long the first round of polls took (every project committed once), seconds. */
  readonly firstRoundSeconds: number;
  /** Detection latency at real scale, seconds; and as a share of the planned base interval. */
  readonly detection: Percentiles;
  readonly detectionRatio: { readonly p50: number; readonly p99: number };
  /** Failures injected, alerts received for them, and webhook requests carrying repeats. */
  readonly injected: number;
  readonly detected: number;
  readonly duplicates: number;
  /** The exporter process at the end (peak RSS is the whole run's). */
  readonly memory: MemorySnapshot;
  /**
   * The memory baseline at its end: a process on the same runtime, flags and environment that
   * made the window's requests at the window's rates and parsed the answers, and nothing else
   * (absent from results files written before it).
   */
  readonly baselineMemory?: MemorySnapshot;
  readonly startSeconds: number;
  /** Wall time of the whole run, seconds (not scaled). */
  readonly wallSeconds: number;
}

interface AlertBody {
  readonly alerts?: readonly { readonly operation_id?: string; readonly kind?: string }[];
}

export async function measureFleet(ctx: BenchContext, options: FleetOptions): Promise<FleetRun> {
  const { projects, compression: k } = options;
  ctx.log(`polling at scale: ${projects} projects, time compressed ${k}x`);
  const wallStarted = performance.now();
  return withRig(
    ctx,
    { prefix: "fleet-", sim: { clock: "real" } },
    async ({ sim, worker, dir }) => {
      const receiver = await startReceiver();
      const random = seededRandom(projects * 31 + k);
      try {
        const seeded = await sim.run("seedBulk", { projects, operationsPerProject: 20 });
        const { nowMs } = await sim.run("now");
        const stateDir = path.join(dir, "state");
        // Checkpoints at the top of each log: everything from now on is new, from the first poll.
        await worker.run("writeStates", {
          dir: stateDir,
          projects: seeded.projectIds.map((id) => ({ id, second: Math.floor(nowMs / 1000) - 1 })),
        });
        const started = await worker.run("start", {
          env: { PGCP_WEBHOOK_URL: `${receiver.url}/hook` },
          config: {
            api: compressedApi(sim.apiUrl, DEFAULTS, k),
            projects: seeded.projectIds,
            state: { dir: stateDir },
            listen: "127.0.0.1:0",
            poll: {
              interval: DEFAULTS.interval / k,
              fastInterval: DEFAULTS.fastInterval / k,
              endpointsInterval: DEFAULTS.endpointsInterval / k,
              firstPageLimit: FIRST_PAGE_LIMIT,
              // One interval for every project, which the figures divide by (scenario 6
              // compares the strategies).
              strategy: "uniform",
            },
            // Each failure's own alert is what is measured (a platform incident holds none).
            sinks: [
              {
                name: "hook",
                kind: "webhook",
                groupWindow: DEFAULTS.groupWindow / k,
                holdIncidentAlerts: false,
              },
            ],
          },
        });
        const plan = await worker.run("scheduler");
        const plannedInterval = plan.baseIntervalSeconds; // compressed seconds

        // The first round: every project polled once (they all fall due within the fast interval).
        const roundStarted = performance.now();
        for (;;) {
          const p = await worker.run("progress");
          if (p.commits >= 2 * projects) break;
          await sleep(200);
        }
        const firstRoundSeconds = (performance.now() - roundStarted) / 1000;

        // The measured window: failures injected at random over 1.5 intervals.
        await resetSimStats(sim);
        receiver.clear();
        const before = await worker.run("progress");
        const windowStarted = performance.now();
        const windowMs = Math.max(1.5 * plannedInterval, 20) * 1000;
        const times = Array.from({ length: options.failures }, () => random() * windowMs).sort(
          (a, b) => a - b,
        );
        const injected: { projectId: string; id: string }[] = [];
        for (const at of times) {
          const wait = at - (performance.now() - windowStarted);
          if (wait > 0) await sleep(wait);
          const projectId = seeded.projectIds[Math.floor(random() * projects)] ?? "";
          const failsAfter = (FAILS_AFTER.min + random() * (FAILS_AFTER.max - FAILS_AFTER.min)) / k;
          const { ids } = await sim.run("script", {
            operations: [
              {
                projectId,
                action: "apply_config",
                steps: [
                  { status: "running", after_seconds: 0 },
                  { status: "failed", after_seconds: failsAfter, error: "bench: injected failure" },
                ],
              },
            ],
          });
          injected.push({ projectId, id: ids[0] ?? "" });
        }
        // Every injected failure detected (or a generous deadline: then the figures say so).
        const wanted = new Set(injected.map((op) => op.id));
        const firstSeen = new Map<string, number>();
        let duplicates = 0;
        const collect = () => {
          firstSeen.clear();
          duplicates = 0;
          for (const request of receiver.requests) {
            for (const alert of (request.json as AlertBody | undefined)?.alerts ?? []) {
              const id = alert.operation_id ?? "";
              if (alert.kind !== "operation_failed" || !wanted.has(id)) continue;
              if (firstSeen.has(id)) duplicates += 1;
              else firstSeen.set(id, request.receivedAtMs);
            }
          }
        };
        const deadline = performance.now() + (4 * plannedInterval + 60 / k + 10) * 1000;
        collect();
        while (firstSeen.size < wanted.size && performance.now() < deadline) {
          await sleep(250);
          collect();
        }
        const seconds = (performance.now() - windowStarted) / 1000;
        const stats = await simStats(sim);
        const after = await worker.run("progress");
        const finalPlan = await worker.run("scheduler");
        // Live memory (after a collection); the peak RSS is the whole run's.
        const memory = await worker.run("gc");
        const snapshots = process.env.BENCH_HEAP_SNAPSHOT;
        if (snapshots !== undefined && snapshots !== "") {
          const file = path.join(snapshots, `fleet-${options.projects}.heapsnapshot`);
          ctx.log(`heap snapshot: ${(await worker.run("heapSnapshot", { file })).file}`);
        }
        await worker.run("stop");
        const baseline = await pollerBaseline(ctx, sim.apiUrl, seeded.projectIds, stats, {
          seconds: Math.min(seconds, BASELINE_MAX_SECONDS),
          windowSeconds: seconds,
          concurrency: DEFAULTS.concurrency * k,
        });

        const failedAt = await sim.run("arrivalTimes", { operations: injected, status: "failed" });
        const latencies: number[] = [];
        for (const [id, received] of firstSeen) {
          const failed = failedAt[id];
          if (failed !== undefined && failed !== null)
            latencies.push(((received - failed) / 1000) * k);
        }
        const detection = percentiles(latencies);
        const perMinute = (n: number) => (n * 60) / seconds / k;
        const polls = after.commits - before.commits;
        const realInterval = finalPlan.baseIntervalSeconds * k;
        return {
          projects,
          compression: k,
          ...requestRates(stats, perMinute),
          // Commits include the notifier's acknowledgements: one per webhook message.
          pollsPerMinute: perMinute(polls - receiver.requests.length),
          observedIntervalSeconds: (projects / ((polls - receiver.requests.length) / seconds)) * k,
          plannedIntervalSeconds: realInterval,
          plannedFastIntervalSeconds: finalPlan.fastIntervalSeconds * k,
          stretch: finalPlan.budget.stretch,
          demandPerMinute: finalPlan.budget.demandPerMinute / k,
          capacityPerMinute: finalPlan.budget.capacityPerMinute / k,
          firstRoundSeconds: firstRoundSeconds * k,
          detection,
          detectionRatio: { p50: detection.p50 / realInterval, p99: detection.p99 / realInterval },
          injected: injected.length,
          detected: firstSeen.size,
          duplicates,
          memory,
          baselineMemory: baseline.memory,
          startSeconds: started.startMs / 1000,
          wallSeconds: (performance.now() - wallStarted) / 1000,
        };
      } finally {
        await receiver.close();
      }
    },
  );
}

/**
 * The memory baseline: a fresh process makes the requests the simulator served in the window
 * (`stats`), at the same rates, for `seconds`, and parses each answer.
 */
async function pollerBaseline(
  ctx: BenchContext,
  apiUrl: string,
  projectIds: readonly string[],
  stats: StatsView,
  window: {
    readonly seconds: number;
    readonly windowSeconds: number;
    readonly concurrency: number;
  },
): Promise<PollerResult> {
  const poller = await startPollerBaseline();
  try {
    const perSecond = (n: number) => n / window.windowSeconds;
    const result = await poller.run("poll", {
      apiUrl,
      apiKey: API_KEY,
      projectIds,
      pollsPerSecond: perSecond(
        routeRequests(stats, "listOperations") + routeRequests(stats, "getOperation"),
      ),
      listingsPerSecond: perSecond(routeRequests(stats, "listEndpoints")),
      firstPageLimit: FIRST_PAGE_LIMIT,
      concurrency: window.concurrency,
      seconds: window.seconds,
    });
    ctx.log(
      `  memory baseline: ${result.requests} requests in ${window.seconds.toFixed(0)} s, ` +
        `peak RSS ${(result.memory.peakRss / 1048576).toFixed(1)} MiB`,
    );
    return result;
  } finally {
    await poller.close();
  }
}
