/**
 * Scenario 2, scrape cost: `/metrics` latency and size with `projects` projects, each with 10
 * actions in its counters and 10 endpoints, while the daemon keeps polling (every project
 * every 30 s and its endpoints every 60 s, the default intervals, with no request budget, so
 * that the metrics keep changing and the rendering keeps being rebuilt). Baseline: a bare
 * node:http server in its own process returning a buffer of the same bytes (and, to a scrape
 * asking for gzip, a buffer of the exporter's gzip bytes). Scrapes go to both in turn from the
 * driver's process, one at a time, over kept-alive connections, plain and in gzip. Latency is
 * measured at the default detail (`standard`); afterwards the same exporter process is
 * restarted at each other level on the same state, to count its series and bytes.
 */
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { Pool } from "undici";
import type { BufferServer } from "../workers/buffer-server.js";
import type { Stall, StallCauses } from "../workers/exporter-host.js";
import {
  API_KEY,
  newScratch,
  removeScratch,
  sleep,
  startExporterWorker,
  startSimWorker,
  type BenchContext,
} from "../lib/context.js";
import type { MemorySnapshot } from "../lib/process-stats.js";
import { startWorker, workerPath } from "../lib/rpc.js";
import { DETAIL_LEVELS, type DetailLevel } from "../../../src/metrics/index.js";
import {
  median,
  percentiles,
  quantile,
  summarize,
  type Percentiles,
  type Summary,
} from "../lib/stats.js";

export interface ScrapePoint {
  readonly projects: number;
  readonly endpoints: number;
  /** Series of `pgcp_operations_total` (project x action x status). */
  readonly operationSeries: number;
  readonly bytes: number;
  readonly lines: number;
  /** The five families with the most bytes: name, series lines, bytes. */
  readonly largestFamilies: readonly { name: string; lines: number; bytes: number }[];
  /** Scrape latency, ms. */
  readonly exporter: Percentiles;
  readonly baseline: Percentiles;
  readonly ratio: { readonly p50: number; readonly p99: number };
  /** The same ratios in each third of the scrapes (three runs): median and range. */
  readonly runRatios: { readonly p50: Summary; readonly p99: Summary };
  /** Scrapes asking for gzip: the gzip body's size, latencies (ms) and their ratios. */
  readonly gzip: {
    readonly bytes: number;
    readonly exporter: Percentiles;
    readonly baseline: Percentiles;
    readonly ratio: { readonly p50: number; readonly p99: number };
  };
  /** The exporter's event-loop delay during the scrapes, ms. */
  readonly eventLoopDelay: LoopDelay;
  /** The exporter's event-loop delay during the 5 rebuilds of `renderMs` alone, ms. */
  readonly renderEventLoopDelay: LoopDelay;
  /** How long one rebuild of the cached rendering takes, its compression included (median of 5), ms. */
  readonly renderMs: number;
  /** Time to set the scenario up (data, catch-up, every endpoint listed), seconds. */
  readonly setupSeconds: number;
  /** The detail level the latencies were measured at. */
  readonly detail: DetailLevel;
  /** The exporter process's memory after the scrapes (its peak RSS included; absent in older results). */
  readonly memory?: MemorySnapshot;
  /** What a scrape holds at each detail level: sample lines (series), bytes plain and in gzip. */
  readonly levels?: readonly LevelSize[];
}

export interface LevelSize {
  readonly detail: DetailLevel;
  readonly series: number;
  readonly bytes: number;
  readonly gzipBytes: number;
}

/** The level scrapes are timed at: the default. */
const TIMED_DETAIL: DetailLevel = "standard";

interface LoopDelay {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
  /** Stalls of the event loop of more than 8 ms (absent in older results). */
  readonly stalls?: number;
  /** The ten longest, with the collector's pauses inside each (absent in older results). */
  readonly longestStalls?: readonly Stall[];
  /** Where the stalls' time went (absent in older results). */
  readonly stallCauses?: StallCauses;
}

/** Ten actions in each project's counters: the bulk history's, and scripted ones. */
const ACTIONS = [
  "apply_config",
  "apply_storage_config",
  "check_availability",
  "create_branch",
  "create_timeline",
  "delete_tenant",
  "start_compute",
  "suspend_compute",
  "prepare_secondary_pageserver",
  "detach_parent_branch",
] as const;

const ENDPOINTS_PER_PROJECT = 10;

export async function measureScrape(
  ctx: BenchContext,
  projects: number,
  scrapes: number,
): Promise<ScrapePoint> {
  ctx.log(`scrape: ${projects} projects, ${projects * ENDPOINTS_PER_PROJECT} endpoints`);
  const setupStarted = performance.now();
  const sim = await startSimWorker();
  const worker = await startExporterWorker();
  const baselineWorker = await startWorker<BufferServer>(workerPath("workers/buffer-server.js"));
  const dir = await newScratch(ctx.scratch, "scrape-");
  const exporterPool: { pool?: Pool } = {};
  const baselinePool: { pool?: Pool } = {};
  try {
    const seeded = await sim.run("seedBulk", { projects, operationsPerProject: 20 });
    await sim.run("addEndpoints", {
      projectIds: seeded.projectIds,
      endpoints: ENDPOINTS_PER_PROJECT,
    });
    await sim.run("script", {
      operations: seeded.projectIds.flatMap((projectId) =>
        ACTIONS.map((action, i) => ({
          projectId,
          action,
          steps: [
            { status: "running", after_seconds: 0 },
            { status: i === 0 ? "failed" : "finished", after_seconds: 5 + i },
          ],
        })),
      ),
    });
    const { nowMs } = await sim.run("advance", { seconds: 120 });
    const truth = await sim.run("truth");
    const stateDir = path.join(dir, "state");
    await worker.run("writeStates", {
      dir: stateDir,
      projects: seeded.projectIds.map((id) => ({ id, second: Math.floor(nowMs / 1000) - 90_000 })),
    });
    const config = (detail: DetailLevel) => ({
      // No budget, and enough jobs per tick to list every project's endpoints in seconds.
      api: {
        url: sim.apiUrl,
        key: API_KEY,
        requestsPerMinute: 1e9,
        burstPerSecond: 1e9,
        concurrency: 200,
      },
      projects: seeded.projectIds,
      state: { dir: stateDir },
      listen: "127.0.0.1:0",
      metrics: { detail },
    });
    /** One scrape, timed to its last byte (a gzip body is not decompressed). */
    const get = async (
      pool: Pool,
      gzip = false,
    ): Promise<{ ms: number; body: Buffer; type: string }> => {
      const t0 = performance.now();
      const response = await pool.request({
        method: "GET",
        path: "/metrics",
        headers: gzip ? { "accept-encoding": "gzip" } : {},
      });
      const body = Buffer.from(await response.body.arrayBuffer());
      const ms = performance.now() - t0;
      if (response.statusCode !== 200) throw new Error(`/metrics answered ${response.statusCode}`);
      if ((response.headers["content-encoding"] === "gzip") !== gzip) {
        throw new Error(
          `/metrics answered Content-Encoding ${String(response.headers["content-encoding"])}`,
        );
      }
      return { ms, body, type: String(response.headers["content-type"] ?? "") };
    };
    /** Starts the exporter at `detail` and waits until it serves every project, listed. */
    const startReady = async (detail: DetailLevel): Promise<Pool> => {
      const { url } = await worker.run("start", { config: config(detail) });
      exporterPool.pool = new Pool(url, { connections: 1 });
      // Ready: every arrival counted and every project's endpoints listed, in a fresh rendering.
      for (let tries = 0; ; tries++) {
        const p = await worker.run("progress");
        await worker.run("refreshMetrics");
        const text = (await get(exporterPool.pool)).body.toString("utf8");
        const listed = sampleValue(text, 'pgcp_endpoint_listings_total{result="success"}');
        if (p.counted >= truth.total && listed >= projects) return exporterPool.pool;
        if (tries > 600) throw new Error(`not ready: ${JSON.stringify(p)}, ${listed} listings`);
        await sleep(1000);
      }
    };
    const ep = await startReady(TIMED_DETAIL);
    const renders: number[] = [];
    await worker.run("startLoopDelay");
    for (let i = 0; i < 5; i++) renders.push((await worker.run("refreshMetrics")).ms);
    const renderEventLoopDelay = await worker.run("stopLoopDelay");
    const sample = await get(ep);
    const sampleGzip = await get(ep, true);
    const text = sample.body.toString("utf8");
    // The daemon keeps polling: the two scrapes may come from two renderings of one size.
    const unzipped = gunzipSync(sampleGzip.body);
    if (Math.abs(unzipped.length - sample.body.length) > sample.body.length / 100) {
      throw new Error(
        `the gzip body holds ${unzipped.length} bytes, the plain ${sample.body.length}`,
      );
    }
    const { url: baselineUrl } = await baselineWorker.run("listen", {
      body: sample.body,
      gzip: sampleGzip.body,
      contentType: sample.type,
    });
    baselinePool.pool = new Pool(baselineUrl, { connections: 1 });
    const bp = baselinePool.pool;
    await get(bp);
    await get(bp, true);
    const setupSeconds = (performance.now() - setupStarted) / 1000;

    // Scrapes in turn, ten rounds a second (a plain pair, then a gzip pair), while the daemon
    // polls.
    const exporterMs: number[] = [];
    const baselineMs: number[] = [];
    const exporterGzipMs: number[] = [];
    const baselineGzipMs: number[] = [];
    await worker.run("startLoopDelay");
    for (let i = 0; i < scrapes; i++) {
      const t0 = performance.now();
      const first = i % 2 === 0 ? ep : bp;
      const second = first === ep ? bp : ep;
      for (const gzip of [false, true]) {
        const a = await get(first, gzip);
        const b = await get(second, gzip);
        const [e, base] = gzip ? [exporterGzipMs, baselineGzipMs] : [exporterMs, baselineMs];
        (first === ep ? e : base).push(a.ms);
        (second === ep ? e : base).push(b.ms);
      }
      const rest = 100 - (performance.now() - t0);
      if (rest > 0) await sleep(rest);
    }
    const eventLoopDelay = await worker.run("stopLoopDelay");
    const memory = await worker.run("memory");
    await worker.run("stop");
    await ep.close();
    // The other levels: the same process restarted on the same state, each one listed again.
    const levels: LevelSize[] = [];
    for (const detail of DETAIL_LEVELS) {
      let size = { detail, plain: sample.body, gzip: sampleGzip.body };
      if (detail !== TIMED_DETAIL) {
        const pool = await startReady(detail);
        size = { detail, plain: (await get(pool)).body, gzip: (await get(pool, true)).body };
        await worker.run("stop");
        await pool.close();
      }
      levels.push({
        detail,
        series: sampleLines(size.plain.toString("utf8")),
        bytes: size.plain.length,
        gzipBytes: size.gzip.length,
      });
    }
    const exporter = percentiles(exporterMs);
    const baseline = percentiles(baselineMs);
    const exporterGzip = percentiles(exporterGzipMs);
    const baselineGzip = percentiles(baselineGzipMs);
    const thirds = [0, 1, 2].map((i) => {
      const from = Math.floor((i * exporterMs.length) / 3);
      const to = Math.floor(((i + 1) * exporterMs.length) / 3);
      return { e: exporterMs.slice(from, to), b: baselineMs.slice(from, to) };
    });
    const blockRatio = (q: number) =>
      summarize(thirds.map(({ e, b }) => quantile(e, q) / quantile(b, q)));
    return {
      projects,
      endpoints: countLines(text, "pgcp_endpoint_info{"),
      operationSeries: countLines(text, "pgcp_operations_total{"),
      bytes: sample.body.length,
      lines: countLines(text, ""),
      largestFamilies: families(text).slice(0, 5),
      exporter,
      baseline,
      ratio: { p50: exporter.p50 / baseline.p50, p99: exporter.p99 / baseline.p99 },
      runRatios: { p50: blockRatio(0.5), p99: blockRatio(0.99) },
      gzip: {
        bytes: sampleGzip.body.length,
        exporter: exporterGzip,
        baseline: baselineGzip,
        ratio: {
          p50: exporterGzip.p50 / baselineGzip.p50,
          p99: exporterGzip.p99 / baselineGzip.p99,
        },
      },
      eventLoopDelay,
      renderEventLoopDelay,
      renderMs: median(renders),
      setupSeconds,
      detail: TIMED_DETAIL,
      memory,
      levels,
    };
  } finally {
    if (exporterPool.pool !== undefined && !exporterPool.pool.closed) {
      await exporterPool.pool.close();
    }
    await baselinePool.pool?.close();
    await worker.close();
    await baselineWorker.close();
    await sim.close();
    await removeScratch(dir);
  }
}

/** Lines of `text` that start with `prefix` (every line for ""). */
function countLines(text: string, prefix: string): number {
  let n = 0;
  for (const line of text.split("\n")) if (line !== "" && line.startsWith(prefix)) n += 1;
  return n;
}

/** Lines of `text` that are samples (not comments): its series. */
function sampleLines(text: string): number {
  let n = 0;
  for (const line of text.split("\n")) if (line !== "" && !line.startsWith("#")) n += 1;
  return n;
}

/** The value of the sample line that starts with `series` (0 when there is none). */
function sampleValue(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

/** Series lines and bytes per family (`# HELP`/`# TYPE` lines included), largest first. */
function families(text: string): { name: string; lines: number; bytes: number }[] {
  const out = new Map<string, { name: string; lines: number; bytes: number }>();
  let current = "";
  for (const line of text.split("\n")) {
    const help = /^# (?:HELP|TYPE) (\S+)/.exec(line);
    if (help !== null) current = help[1] ?? "";
    const entry = out.get(current) ?? { name: current, lines: 0, bytes: 0 };
    entry.bytes += Buffer.byteLength(line) + 1;
    if (help === null && line !== "") entry.lines += 1;
    out.set(current, entry);
  }
  return [...out.values()].sort((a, b) => b.bytes - a.bytes);
}
