/**
 * Scenario 1, ingest throughput: a catch-up of many new operations through the exporter's
 * full path (fetch, validate, track, update metrics, commit), against the same pages fetched
 * with undici and parsed with `JSON.parse` alone, in the same run.
 *
 * The simulator holds finished histories (`seedBulk`); every project starts from a committed
 * checkpoint just below its oldest record, as a daemon that was stopped before all of them
 * happened would have left it. The exporter (in its own process, started with `startExporter`
 * and the default poll settings: a first page of 50, then pages of 500, 20 pages per poll) is
 * driven with `daemon.pollAll()` until every arrival is committed, so that the figure is the
 * path's cost and not the scheduler's once-a-second tick.
 */
import path from "node:path";
import {
  API_KEY,
  newScratch,
  removeScratch,
  startExporterWorker,
  startSimWorker,
  type BenchContext,
} from "../lib/context.js";
import { summarize, type Summary } from "../lib/stats.js";
import type { BaselineResult, CatchUpResult } from "../workers/exporter-host.js";

export interface IngestShape {
  readonly projects: number;
  readonly operationsPerProject: number;
}

export interface IngestPoint extends IngestShape {
  readonly operations: number;
  /** Operations per second through the exporter's full path. */
  readonly exporterOpsPerSecond: Summary;
  readonly baselineOpsPerSecond: Summary;
  /** Exporter time / baseline time, per run (target: at most 2). */
  readonly costRatio: Summary;
  /** Exporter CPU time / baseline CPU time (both processes' own CPU), per run. */
  readonly cpuRatio: Summary;
  readonly exporterSeconds: Summary;
  readonly baselineSeconds: Summary;
  /** Poll rounds (`pollAll`) the catch-up took. */
  readonly rounds: number;
  /**
   * The exporter process's peak RSS during the catch-up, bytes (median of the runs). `pollAll`
   * starts every project's poll at once, so with many projects they are all in flight together
   * (the scheduler runs at most `api.concurrency` at a time).
   */
  readonly exporterPeakRss: number;
  /** One more run at log level `warn` (no info line per operation), against a baseline run. */
  readonly quietLog?: {
    readonly exporterOpsPerSecond: number;
    readonly costRatio: number;
    readonly cpuRatio: number;
  };
}

const SPAN_SECONDS = 86_400;
const CONCURRENCY = 8;
const FIRST_PAGE = 50;
const PAGE = 500;

/** One catch-up by a fresh exporter process; its time, CPU time and peak RSS. */
async function exporterRun(
  ctx: BenchContext,
  apiUrl: string,
  projectIds: readonly string[],
  checkpointSecond: number,
  operations: number,
  logLevel: string,
): Promise<CatchUpResult> {
  const worker = await startExporterWorker();
  const dir = await newScratch(ctx.scratch, "ingest-");
  try {
    const stateDir = path.join(dir, "state");
    await worker.run("writeStates", {
      dir: stateDir,
      projects: projectIds.map((id) => ({ id, second: checkpointSecond })),
    });
    await worker.run("start", {
      logLevel,
      config: {
        api: {
          url: apiUrl,
          key: API_KEY,
          // The simulator has no rate limit here; neither should the client.
          requestsPerMinute: 1e9,
          burstPerSecond: 1e9,
          concurrency: CONCURRENCY,
          timeout: 120,
        },
        projects: [...projectIds],
        state: { dir: stateDir },
        listen: "127.0.0.1:0",
        // The scheduler stays idle: `catchUp` drives the polls.
        poll: {
          interval: 1e6,
          fastInterval: 1e6,
          endpointsInterval: 0,
          firstPageLimit: FIRST_PAGE,
          pageLimit: PAGE,
        },
      },
    });
    await worker.run("gc");
    const result = await worker.run("catchUp", { expected: operations });
    if (result.counted !== operations) {
      throw new Error(`exporter counted ${result.counted} of ${operations} arrivals`);
    }
    await worker.run("stop");
    return result;
  } finally {
    await worker.close();
    await removeScratch(dir);
  }
}

/** One walk of the baseline in a fresh process. */
async function baselineRun(
  apiUrl: string,
  projectIds: readonly string[],
  operations: number,
): Promise<BaselineResult> {
  const worker = await startExporterWorker();
  try {
    const result = await worker.run("baseline", {
      apiUrl,
      apiKey: API_KEY,
      projectIds,
      firstPageLimit: FIRST_PAGE,
      pageLimit: PAGE,
      concurrency: CONCURRENCY,
    });
    if (result.operations !== operations) {
      throw new Error(`baseline read ${result.operations} of ${operations} operations`);
    }
    return result;
  } finally {
    await worker.close();
  }
}

/**
 * `shape`'s figures over `ctx.runs` runs of each side. With `quietLog`, one more exporter run
 * at log level `warn` shows what the info line the daemon writes per operation costs.
 */
export async function measureIngest(
  ctx: BenchContext,
  shape: IngestShape,
  quietLog = false,
): Promise<IngestPoint> {
  const operations = shape.projects * shape.operationsPerProject;
  ctx.log(`ingest: ${shape.projects} x ${shape.operationsPerProject} = ${operations} operations`);
  const sim = await startSimWorker();
  try {
    const { projectIds } = await sim.run("seedBulk", {
      projects: shape.projects,
      operationsPerProject: shape.operationsPerProject,
      spanSeconds: SPAN_SECONDS,
    });
    const { nowMs } = await sim.run("now");
    // Every record lies after this second: the whole log is new to the exporter.
    const checkpointSecond = Math.floor(nowMs / 1000) - SPAN_SECONDS - 2;
    // One untimed walk first, so that neither side meets a simulator still compiling its code.
    await baselineRun(sim.apiUrl, projectIds, operations);
    const exporter: CatchUpResult[] = [];
    const baseline: BaselineResult[] = [];
    for (let run = 0; run < ctx.runs; run++) {
      // Alternate the order, so that a drift of the machine does not favour one side.
      const exporterFirst = run % 2 === 1;
      if (!exporterFirst) baseline.push(await baselineRun(sim.apiUrl, projectIds, operations));
      exporter.push(
        await exporterRun(ctx, sim.apiUrl, projectIds, checkpointSecond, operations, "info"),
      );
      if (exporterFirst) baseline.push(await baselineRun(sim.apiUrl, projectIds, operations));
      ctx.log(
        `  run ${run + 1}: exporter ${(exporter.at(-1)?.ms ?? 0).toFixed(0)} ms, ` +
          `baseline ${(baseline.at(-1)?.ms ?? 0).toFixed(0)} ms`,
      );
    }
    let quiet: IngestPoint["quietLog"];
    if (quietLog) {
      const result = await exporterRun(
        ctx,
        sim.apiUrl,
        projectIds,
        checkpointSecond,
        operations,
        "warn",
      );
      const base = await baselineRun(sim.apiUrl, projectIds, operations);
      quiet = {
        exporterOpsPerSecond: operations / (result.ms / 1000),
        costRatio: result.ms / base.ms,
        cpuRatio: result.cpuMs / base.cpuMs,
      };
      ctx.log(
        `  at log level warn: exporter ${result.ms.toFixed(0)} ms, baseline ${base.ms.toFixed(0)} ms`,
      );
    }
    const perSecond = (ms: number) => operations / (ms / 1000);
    return {
      ...shape,
      operations,
      exporterOpsPerSecond: summarize(exporter.map((r) => perSecond(r.ms))),
      baselineOpsPerSecond: summarize(baseline.map((r) => perSecond(r.ms))),
      costRatio: summarize(exporter.map((r, i) => r.ms / (baseline[i]?.ms ?? NaN))),
      cpuRatio: summarize(exporter.map((r, i) => r.cpuMs / (baseline[i]?.cpuMs ?? NaN))),
      exporterSeconds: summarize(exporter.map((r) => r.ms / 1000)),
      baselineSeconds: summarize(baseline.map((r) => r.ms / 1000)),
      rounds: exporter.at(-1)?.rounds ?? 0,
      exporterPeakRss: summarize(exporter.map((r) => r.memory.peakRss)).median,
      ...(quiet === undefined ? {} : { quietLog: quiet }),
    };
  } finally {
    await sim.close();
  }
}
