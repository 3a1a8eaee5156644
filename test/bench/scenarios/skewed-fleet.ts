/**
 * Scenario 6, time to alert in a skewed fleet: `projects` projects under one key at the
 * default budget (700 requests a minute), whose activity follows a Zipf-like shape (5% of the
 * projects bring 80% of the traffic's activities), polled with one `poll.strategy`; the run
 * report puts `uniform` and `activity` side by side.
 *
 * The simulator's traffic generator makes the activity, with the control plane's own load
 * (availability checks every 10 minutes in every project). Failures are injected as scripted
 * operations that run 1-30 s and fail: 80% in projects drawn with the traffic's own weights
 * (in proportion to activity), 20% in projects of the cold half of the ranking, drawn evenly.
 *
 * Time runs `compression` k times faster: the simulator's clock at speed k (operations,
 * auto-suspends, traffic, checks all k times faster, and the `Date` of its answers), the
 * exporter's intervals divided by k, its budget and concurrency multiplied by k. Its active
 * window is not divided: operations age by the API's clock, which runs k times faster already.
 * Figures are given back at real scale. What does not scale: the notifier's look at the outboxes
 * every 250 ms and each request's cost, which add up to some k / 4 seconds (real scale) to a
 * detection, and the plan's update once a second; both strategies pay them alike.
 *
 * Phases: the fleet has run for two hours when the simulator starts (`historySeconds`); the
 * exporter starts at the top of every log and makes its first round: each project polled, its
 * endpoints listed, its name read (`firstRoundSeconds`); a warm-up of one longest
 * interval lets the plan learn where the activity is; then a window of injected failures; then
 * a drain until each is alerted (or a deadline). Request rates are the window's; the longest
 * time unpolled is over the warm-up, the window and the drain.
 */
import path from "node:path";
import { startReceiver } from "../../support/receiver.js";
import { seededRandom } from "../../support/random.js";
import { zipfExponentFor } from "../../../src/simulator/index.js";
import { ZipfChooser } from "../../../src/simulator/traffic/zipf.js";
import {
  compressedApi,
  requestRates,
  resetSimStats,
  routeRequests,
  simStats,
  sleep,
} from "../lib/context.js";
import type { BenchContext, SimWorker } from "../lib/context.js";
import type { StatsView } from "../../../src/simulator/index.js";
import { withRig } from "../lib/rig.js";
import { percentiles, type Percentiles } from "../lib/stats.js";

export type Strategy = "uniform" | "activity";

export interface SkewedFleetOptions {
  readonly projects: number;
  readonly strategy: Strategy;
  /** Time compression factor k. */
  readonly compression: number;
  /** Failures to inject in the window. */
  readonly failures: number;
}

/** The shape and settings of the run (real-scale seconds, per simulated minute). */
const SETTINGS = {
  interval: 30,
  fastInterval: 5,
  endpointsInterval: 600,
  activeWindow: 3600,
  requestsPerMinute: 700,
  burstPerSecond: 40,
  concurrency: 8,
  groupWindow: 5,
  /** The traffic's activities per minute for each 1,000 projects. */
  activitiesPerThousand: 3,
  /** 5% of the projects bring 80% of the activities. */
  hotShare: 0.05,
  hotActivity: 0.8,
  /** Share of the injected failures that go to the cold half of the projects. */
  coldFailureShare: 0.2,
  /**
   * How long the fleet has run when the exporter starts: two active windows, so that the
   * operations of the projects' creation have aged out of what counts as recent activity, as
   * in a fleet that was not created the minute before.
   */
  historySeconds: 7200,
  /** The window lasts this many uniform cycles, and at least `minWindowSeconds`. */
  windowCycles: 1.7,
  minWindowSeconds: 720,
} as const;

/** Injected operations run this long (simulated seconds) before they fail. */
const FAILS_AFTER = { min: 1, max: 30 } as const;

export interface SkewedFleetRun {
  readonly projects: number;
  readonly strategy: Strategy;
  readonly compression: number;
  /** The traffic's activities per minute, and its Zipf exponent. */
  readonly activitiesPerMinute: number;
  readonly skew: number;
  /** Share of the window's operations (availability checks aside) in the top 5% of projects. */
  readonly hotOperationShare: number;
  /** The plan at the end, real-scale seconds. */
  readonly intervals: {
    readonly fast: number;
    readonly active: number;
    readonly idle: number;
    readonly max: number;
  };
  /** Per (real-scale) minute in the window. */
  readonly requestsPerMinute: number;
  readonly pollRequestsPerMinute: number;
  readonly listingRequestsPerMinute: number;
  /** Reads of projects, branches and organisations (names beside ids). */
  readonly describeRequestsPerMinute: number;
  /**
   * From the exporter's start until every project was polled, its endpoints listed and its name
   * read once, seconds (real scale).
   */
  readonly firstRoundSeconds: number;
  /** Requests the simulator refused with 429, from the warm-up on. */
  readonly rateLimited: number;
  /** The longest any project went without a read of its operations, seconds (real scale). */
  readonly longestUnpolledSeconds: number;
  /** Detection latency, from the failure to the webhook's 2xx, seconds (real scale). */
  readonly detection: Percentiles;
  /** From the failure to the poll that raised its alert (the body's `detected_at`). */
  readonly raising: Percentiles;
  readonly coldDetection: Percentiles;
  readonly injected: number;
  readonly detected: number;
  readonly coldInjected: number;
  readonly coldDetected: number;
  readonly windowSeconds: number;
  /** Wall time of the whole run, seconds (not scaled). */
  readonly wallSeconds: number;
}

interface AlertBody {
  readonly alerts?: readonly {
    readonly operation_id?: string;
    readonly kind?: string;
    readonly detected_at?: string;
  }[];
}

interface Injected {
  readonly projectId: string;
  readonly id: string;
  readonly cold: boolean;
}

export async function measureSkewedFleet(
  ctx: BenchContext,
  options: SkewedFleetOptions,
): Promise<SkewedFleetRun> {
  const { projects, strategy, compression: k } = options;
  const wallStarted = performance.now();
  const activitiesPerMinute = (SETTINGS.activitiesPerThousand * projects) / 1000;
  const skew = zipfExponentFor(projects, SETTINGS.hotShare, SETTINGS.hotActivity);
  ctx.log(`skewed fleet: ${projects} projects, ${strategy}, time compressed ${k}x`);
  const sim = {
    clock: "real" as const,
    speed: k,
    rateLimit: {
      perMinute: SETTINGS.requestsPerMinute * k,
      burstPerSecond: SETTINGS.burstPerSecond * k,
    },
    availabilityCheckSeconds: 600,
    traffic: {
      projects,
      operationsPerMinute: activitiesPerMinute,
      skew,
      historySeconds: SETTINGS.historySeconds,
    },
  };
  return withRig(ctx, { prefix: "skewed-", sim }, async ({ sim, worker, dir }) => {
    const receiver = await startReceiver();
    // One draw per fleet size: both strategies meet the same failures, in the same projects at
    // the same points of the window, on the same fleet (the simulator's seed is fixed).
    const random = seededRandom(projects * 17);
    try {
      const { projectIds } = await sim.run("trafficProjects");
      const { simMs: nowMs } = await sim.run("anchor");
      const stateDir = path.join(dir, "state");
      await worker.run("writeStates", {
        dir: stateDir,
        projects: projectIds.map((id) => ({ id, second: Math.floor(nowMs / 1000) - 1 })),
      });
      await worker.run("start", {
        env: { PGCP_WEBHOOK_URL: `${receiver.url}/hook` },
        config: {
          api: compressedApi(sim.apiUrl, SETTINGS, k),
          projects: projectIds,
          state: { dir: stateDir },
          listen: "127.0.0.1:0",
          poll: {
            strategy,
            interval: SETTINGS.interval / k,
            fastInterval: SETTINGS.fastInterval / k,
            endpointsInterval: SETTINGS.endpointsInterval / k,
            activeWindow: SETTINGS.activeWindow,
          },
          sinks: [
            {
              name: "hook",
              kind: "webhook",
              groupWindow: SETTINGS.groupWindow / k,
              // The availability checks' own failures (5% of some 1,000 checks a minute at
              // 10,000 projects) are not measured: compressed k times, they would queue ahead of
              // the measured alerts at the notifier's uncompressed pace.
              drop: [{ actions: ["check_availability"] }],
              // Each failure's own alert is what is measured, also once failures of one kind
              // across the fleet make a platform incident.
              holdIncidentAlerts: false,
            },
          ],
        },
      });
      const started = performance.now();
      for (;;) {
        const p = await worker.run("progress");
        if (p.commits >= projects && firstRoundDone(await simStats(sim), projects)) break;
        await sleep(500);
      }
      const firstRoundSeconds = ((performance.now() - started) / 1000) * k;

      // Warm-up: one longest interval, the same for both strategies' figures.
      const plan = await worker.run("scheduler");
      const longest = Math.max(plan.maxIntervalSeconds, plan.baseIntervalSeconds);
      await resetSimStats(sim);
      await sleep(longest * 1000);

      // The window: failures at random moments.
      // The uniform cycle: `maxInterval` is the cycle itself (uniform) or twice it (auto).
      const uniformCycle = (strategy === "uniform" ? 1 : 0.5) * plan.maxIntervalSeconds * k;
      const windowSeconds = Math.max(
        SETTINGS.windowCycles * uniformCycle,
        SETTINGS.minWindowSeconds,
      );
      const atStart = await simStats(sim);
      const anchor = await sim.run("anchor");
      ctx.log(`  window of ${Math.round(windowSeconds)} s (real scale) after the warm-up`);
      receiver.clear();
      const windowStarted = performance.now();
      const injected = await inject(sim, random, projectIds, skew, {
        count: options.failures,
        windowMs: (windowSeconds / k) * 1000,
        windowStarted,
      });
      const atEnd = await simStats(sim);
      const windowWallSeconds = (performance.now() - windowStarted) / 1000;
      const finalPlan = await worker.run("scheduler");

      // The drain: until every failure is alerted, or one longest interval and a margin.
      const firstSeen = new Map<string, number>();
      const raisedAt = new Map<string, number>();
      const wanted = new Set(injected.map((op) => op.id));
      const collect = () => {
        for (const request of receiver.requests) {
          for (const alert of (request.json as AlertBody | undefined)?.alerts ?? []) {
            const id = alert.operation_id ?? "";
            if (alert.kind === "operation_failed" && wanted.has(id) && !firstSeen.has(id)) {
              firstSeen.set(id, request.receivedAtMs);
              raisedAt.set(id, Date.parse(alert.detected_at ?? ""));
            }
          }
        }
      };
      const deadline = performance.now() + (1.2 * longest + 60 / k + 5) * 1000;
      collect();
      while (firstSeen.size < wanted.size && performance.now() < deadline) {
        await sleep(250);
        collect();
      }
      const atDrain = await simStats(sim);
      const shape = await sim.run("operationsSince", { sinceMs: anchor.simMs });
      await worker.run("stop");

      const failedAt = await sim.run("arrivalTimes", { operations: injected, status: "failed" });
      // Wall time of the receiver's 2xx, as simulated time: the clock runs k times faster.
      const simAt = (wallMs: number) => anchor.simMs + (wallMs - anchor.wallMs) * k;
      const latency = (ops: readonly Injected[], at = firstSeen) =>
        ops.flatMap((op) => {
          const received = at.get(op.id);
          const failed = failedAt[op.id];
          if (received === undefined || failed === undefined || failed === null) return [];
          return [(simAt(received) - failed) / 1000];
        });
      const cold = injected.filter((op) => op.cold);
      const perMinute = (n: number) => (n * 60) / (windowWallSeconds * k);
      const delta = (route: string) => routeRequests(atEnd, route) - routeRequests(atStart, route);
      const pollRequests = delta("listOperations") + delta("getOperation");
      return {
        projects,
        strategy,
        compression: k,
        activitiesPerMinute,
        skew,
        hotOperationShare: topShare(projectIds, shape, SETTINGS.hotShare),
        intervals: {
          fast: finalPlan.fastIntervalSeconds * k,
          active: finalPlan.activeIntervalSeconds * k,
          idle: finalPlan.baseIntervalSeconds * k,
          max: finalPlan.maxIntervalSeconds * k,
        },
        requestsPerMinute: perMinute(atEnd.total - atStart.total),
        pollRequestsPerMinute: perMinute(pollRequests),
        listingRequestsPerMinute: perMinute(delta("listEndpoints")),
        describeRequestsPerMinute: perMinute(
          DESCRIBE_ROUTES.reduce((n, route) => n + delta(route), 0),
        ),
        firstRoundSeconds,
        rateLimited: requestRates(atDrain, (n) => n).rateLimited,
        longestUnpolledSeconds: atDrain.longestUnreadSeconds * k,
        detection: percentiles(latency(injected)),
        // `detected_at` is the exporter's wall clock, as the receiver's `receivedAtMs` is.
        raising: percentiles(latency(injected, raisedAt).filter((x) => Number.isFinite(x))),
        coldDetection: percentiles(latency(cold)),
        injected: injected.length,
        detected: firstSeen.size,
        coldInjected: cold.length,
        coldDetected: cold.filter((op) => firstSeen.has(op.id)).length,
        windowSeconds: windowWallSeconds * k,
        wallSeconds: (performance.now() - wallStarted) / 1000,
      };
    } finally {
      await receiver.close();
    }
  });
}

/** The routes of what is read to show names beside ids. */
const DESCRIBE_ROUTES = ["getProject", "listBranches", "getOrganization"] as const;

/** Every project polled, its endpoints listed and its name read once. */
function firstRoundDone(stats: StatsView, projects: number): boolean {
  return ["listOperations", "listEndpoints", "getProject"].every(
    (route) => routeRequests(stats, route) >= projects,
  );
}

async function inject(
  sim: SimWorker,
  random: () => number,
  ranked: readonly string[],
  skew: number,
  window: { readonly count: number; readonly windowMs: number; readonly windowStarted: number },
): Promise<Injected[]> {
  const chooser = new ZipfChooser(ranked.length, skew);
  const draw = { next: random };
  const coldFrom = Math.floor(ranked.length / 2);
  const times = Array.from({ length: window.count }, () => random() * window.windowMs).sort(
    (a, b) => a - b,
  );
  const injected: Injected[] = [];
  for (const at of times) {
    const wait = at - (performance.now() - window.windowStarted);
    if (wait > 0) await sleep(wait);
    const cold = random() < SETTINGS.coldFailureShare;
    const rank = cold
      ? coldFrom + Math.floor(random() * (ranked.length - coldFrom))
      : chooser.choose(draw);
    const projectId = ranked[rank] ?? "";
    const failsAfter = FAILS_AFTER.min + random() * (FAILS_AFTER.max - FAILS_AFTER.min);
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
    injected.push({ projectId, id: ids[0] ?? "", cold });
  }
  return injected;
}

/** The share of the operations that fell on the top `share` of the ranking. */
function topShare(ranked: readonly string[], counts: Record<string, number>, share: number) {
  const top = Math.max(1, Math.round(ranked.length * share));
  let hot = 0;
  let all = 0;
  ranked.forEach((id, rank) => {
    const n = counts[id] ?? 0;
    all += n;
    if (rank < top) hot += n;
  });
  return all === 0 ? NaN : hot / all;
}
