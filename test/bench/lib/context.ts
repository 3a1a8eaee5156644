/**
 * What every scenario gets from the driver: the scale, the number of runs, a scratch
 * directory, a progress log, and helpers to start the worker processes.
 */
import { mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { DAEMON_ENVIRONMENT, DAEMON_NODE_FLAGS } from "../../../src/exporter/process-settings.js";
import type { StatsView } from "../../../src/simulator/index.js";
import type { ExporterHost } from "../workers/exporter-host.js";
import type { PollerBaseline } from "../workers/poller-baseline.js";
import type { SimHost, SimStartArgs } from "../workers/sim-host.js";
import { exporterHostBundle } from "./host-bundle.js";
import { startWorker, workerPath, type Worker } from "./rpc.js";

export { sleep } from "../../support/wait.js";

export const API_KEY = "bench-api-key";

export interface BenchContext {
  /** Multiplies the work of every scenario (BENCH_SCALE, default 1). */
  readonly scale: number;
  /** Repetitions of each measurement (BENCH_RUNS, default 3). */
  readonly runs: number;
  /** A directory removed at the end of the run. */
  readonly scratch: string;
  log(message: string): void;
}

export async function newScratch(root: string, prefix: string): Promise<string> {
  return mkdtemp(path.join(root, prefix));
}

export async function removeScratch(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** The heap limit given to the worker processes: the big scenarios hold a lot. */
const HEAP = "--max-old-space-size=8192";

export type SimWorker = Worker<SimHost> & { readonly apiUrl: string; readonly url: string };

/** A simulator in its own process; no rate limit unless asked for. */
export async function startSimWorker(options: Partial<SimStartArgs> = {}): Promise<SimWorker> {
  const worker = await startWorker<SimHost>(workerPath("workers/sim-host.js"), {
    execArgv: [HEAP],
  });
  const started = await worker.run("start", {
    apiKey: API_KEY,
    clock: "manual",
    seed: 7,
    rateLimit: false,
    startTimeMs: Date.now(),
    ...options,
  });
  return Object.assign(worker, { apiUrl: started.apiUrl, url: started.url });
}

export type ExporterWorker = Worker<ExporterHost>;

/** BENCH_CPU_PROF=<dir>: the exporter workers write V8 CPU profiles there (for finding costs). */
function profiling(): string[] {
  return profiled() ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF ?? ""}`] : [];
}

function profiled(): boolean {
  const dir = process.env.BENCH_CPU_PROF;
  return dir !== undefined && dir !== "";
}

/** BENCH_NODE_FLAGS="--flag ...": more node flags for the exporter processes (not the others). */
function nodeFlags(): string[] {
  return (process.env.BENCH_NODE_FLAGS ?? "").split(/\s+/).filter((flag) => flag !== "");
}

/**
 * The environment the image starts the daemon with, and BENCH_EXPORTER_ENV="NAME=value ...":
 * more environment for the exporter processes alone (it wins).
 */
function exporterEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...DAEMON_ENVIRONMENT };
  for (const pair of (process.env.BENCH_EXPORTER_ENV ?? "").split(/\s+/)) {
    const at = pair.indexOf("=");
    if (at > 0) env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return env;
}

/**
 * A fresh process for the exporter or a baseline, bundled as `dist/` is and started with the
 * node flags and environment the image starts the daemon with (BENCH_NODE_FLAGS come after
 * them, and so win). With BENCH_CPU_PROF, the compiled modules unbundled: a profile's frames
 * then name the files of `src/` (`stall-profile.ts` looks for them).
 */
export async function startExporterWorker(): Promise<ExporterWorker> {
  const host = profiled() ? workerPath("workers/exporter-host.js") : await exporterHostBundle();
  return startWorker<ExporterHost>(host, {
    env: exporterEnv(),
    execArgv: [...daemonExecArgv(), ...profiling()],
    // The exporter logs JSON lines to its standard output, as in production: to /dev/null.
    stdout: "ignore",
  });
}

/**
 * A fresh process for the budget run's memory baseline (`workers/poller-baseline.ts`), with the
 * exporter's node flags and environment, so that the runtime and its settings are the same.
 */
export function startPollerBaseline(): Promise<Worker<PollerBaseline>> {
  return startWorker<PollerBaseline>(workerPath("workers/poller-baseline.js"), {
    env: exporterEnv(),
    execArgv: daemonExecArgv(),
  });
}

function daemonExecArgv(): string[] {
  return [HEAP, "--expose-gc", ...DAEMON_NODE_FLAGS, ...nodeFlags()];
}

/** Requests the simulator served, per route and status (`GET /_sim/stats`). */
export async function simStats(sim: SimWorker): Promise<StatsView> {
  const response = await fetch(`${sim.url}/_sim/stats`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  return (await response.json()) as StatsView;
}

/** Forgets the simulator's request counts (`DELETE /_sim/stats`). */
export async function resetSimStats(sim: SimWorker): Promise<void> {
  const response = await fetch(`${sim.url}/_sim/stats`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  await response.arrayBuffer();
}

/** Requests of one route in a stats view, every status. */
export function routeRequests(stats: StatsView, route: string): number {
  return Object.values(stats.routes[route] ?? {}).reduce((a, b) => a + b, 0);
}

/** What the simulator served in a window, per minute, and the requests it refused with 429. */
export interface RequestRates {
  readonly requestsPerMinute: number;
  /** Operations reads: the polls' requests. */
  readonly pollRequestsPerMinute: number;
  /** Endpoint listings. */
  readonly listingRequestsPerMinute: number;
  readonly rateLimited: number;
}

/** The rates of a stats view; `perMinute` turns a count in the window into a rate. */
export function requestRates(stats: StatsView, perMinute: (n: number) => number): RequestRates {
  let rateLimited = 0;
  for (const perStatus of Object.values(stats.routes)) rateLimited += perStatus["429"] ?? 0;
  return {
    requestsPerMinute: perMinute(stats.total),
    pollRequestsPerMinute: perMinute(
      routeRequests(stats, "listOperations") + routeRequests(stats, "getOperation"),
    ),
    listingRequestsPerMinute: perMinute(routeRequests(stats, "listEndpoints")),
    rateLimited,
  };
}

/**
 * The exporter's `api` settings for a run compressed k times: the budget, its bursts and the
 * requests in flight multiplied by k (in flight = rate x time per request, and the time per
 * request does not shrink with k).
 */
export function compressedApi(
  url: string,
  real: {
    readonly requestsPerMinute: number;
    readonly burstPerSecond: number;
    readonly concurrency: number;
  },
  k: number,
) {
  return {
    url,
    key: API_KEY,
    requestsPerMinute: real.requestsPerMinute * k,
    burstPerSecond: real.burstPerSecond * k,
    concurrency: real.concurrency * k,
  };
}
