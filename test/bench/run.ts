/**
 * `npm run bench`: runs every scenario (or those named in BENCH_ONLY), writes the figures to a
 * JSON file (BENCH_OUT, default `test/bench/results.json`) and prints them as Markdown tables
 * (`docs/performance.md` gives the latest figures).
 *
 *   BENCH_SCALE=0.1 npm run bench            # a quick look (about 6 minutes)
 *   BENCH_SCALE=10 npm run bench             # ten times the work (hours)
 *   BENCH_ONLY=ingest,scrape npm run bench   # some scenarios only
 *   BENCH_ONLY=handover npm run bench        # needs PostgreSQL: PGCP_TEST_POSTGRES_URL, or the
 *                                            # Debian package postgresql for a throwaway server
 *   BENCH_RUNS=5 npm run bench               # more repetitions of the ingest and spans runs
 *   npm run bench -- --report FILE           # print the tables of an earlier results file
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { writeJson } from "./lib/json-file.js";
import { newScratch, removeScratch, type BenchContext } from "./lib/context.js";
import { report } from "./report.js";
import { measureIngest, type IngestPoint } from "./scenarios/ingest.js";
import { measureCycleCost, type CycleCost } from "./scenarios/requests.js";
import { measureFleet, type FleetRun } from "./scenarios/fleet.js";
import { measureHandover, type HandoverRun } from "./scenarios/handover.js";
import { measureScrape, type ScrapePoint } from "./scenarios/scrape.js";
import { measureSkewedFleet, type SkewedFleetRun } from "./scenarios/skewed-fleet.js";
import { measureState, type StatePoint } from "./scenarios/state.js";
import { measureDelivery, type DeliveryPoint } from "./scenarios/delivery.js";
import {
  measureSpanThroughput,
  measureTimeToSpan,
  measureWireMemory,
  type SpansResults,
} from "./scenarios/spans.js";
import { SPAN_QUEUE_LIMIT } from "../../src/store/index.js";

export const SCENARIOS = [
  "ingest",
  "scrape",
  "requests",
  "fleet",
  "skewed",
  "state",
  "handover",
  "delivery",
  "spans",
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface Machine {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly memoryBytes: number;
  readonly node: string;
  readonly platform: string;
  readonly kernel: string;
  /** 1-minute load averages when the run started and ended (other processes included). */
  readonly loadAverageStart: number;
  readonly loadAverageEnd: number;
}

export interface Results {
  readonly startedAt: string;
  readonly seconds: number;
  readonly scale: number;
  readonly runs: number;
  readonly commit: string;
  readonly machine: Machine;
  /** Scenario 1: one project, and many projects of 1,000 operations, at three sizes each. */
  readonly ingest?: { readonly oneProject: IngestPoint[]; readonly manyProjects: IngestPoint[] };
  /** Scenario 2 at three sizes. */
  readonly scrape?: ScrapePoint[];
  /** Scenario 3, requests per project per cycle, at three sizes. */
  readonly requests?: CycleCost[];
  /** Scenarios 3 (under the budget), 4 and 5 (memory), at three sizes. */
  readonly fleet?: FleetRun[];
  /** Scenario 5, commits and start-up, at three sizes. */
  readonly state?: StatePoint[];
  /** Scenario 6, time to alert in a skewed fleet, both strategies at two sizes. */
  readonly skewed?: SkewedFleetRun[];
  /** Scenario 7, handover after a SIGKILL between replicas on PostgreSQL. */
  readonly handover?: HandoverRun;
  /** Scenario 8, the delivery loop at rest and on a new alert. */
  readonly delivery?: DeliveryPoint[];
  /** Scenario 9, the span export: throughput at three sizes, time to span, the wire's memory. */
  readonly spans?: SpansResults;
}

const here = path.dirname(fileURLToPath(import.meta.url));
/** The repository: the build is `node_modules/.cache/pgcp-bench/test/bench/`. */
const repository = path.resolve(here, "../../../../..");

function parseScale(): number {
  const scale = Number(process.env.BENCH_SCALE ?? "1");
  if (!(scale > 0)) throw new Error(`BENCH_SCALE must be a positive number, not ${scale}`);
  return scale;
}

function only(): Set<ScenarioName> {
  const raw = process.env.BENCH_ONLY ?? "";
  if (raw.trim() === "") return new Set(SCENARIOS);
  const names = raw.split(",").map((s) => s.trim());
  for (const name of names) {
    if (!(SCENARIOS as readonly string[]).includes(name)) {
      throw new Error(`unknown scenario ${name} in BENCH_ONLY (known: ${SCENARIOS.join(", ")})`);
    }
  }
  return new Set(names as ScenarioName[]);
}

/** `n * scale`, rounded, at least `min`. */
const scaled = (n: number, scale: number, min = 1) => Math.max(min, Math.round(n * scale));

/**
 * The time compression of a fleet run: none up to 100 projects; above, enough to bring the
 * stretched poll interval near 15 s, at most 40x (beyond that one core cannot keep up with the
 * compressed request rate on the machine the figures were taken on).
 */
export function compressionFor(projects: number): number {
  if (projects <= 100) return 1;
  const realInterval = 30 * Math.max(1, (3 * projects) / 630);
  return Math.min(40, Math.max(1, Math.round(realInterval / 15)));
}

/**
 * The time compression of a skewed-fleet run: small enough that what does not scale (the
 * notifier's look every 250 ms, the plan's update every second: k / 4 and k seconds at real
 * scale) stays well under the detection times measured.
 */
export function skewedCompressionFor(projects: number): number {
  if (projects <= 100) return 1;
  return projects <= 2000 ? 4 : 20;
}

function machine(loadAverageStart: number): Machine {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? "unknown",
    memoryBytes: os.totalmem(),
    node: process.version,
    platform: `${os.platform()} ${os.arch()}`,
    kernel: os.release(),
    loadAverageStart,
    loadAverageEnd: os.loadavg()[0] ?? NaN,
  };
}

function gitCommit(): string {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: repository });
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], {
      cwd: repository,
    });
    return `${head.toString().trim()}${dirty.length > 0 ? " (with local changes)" : ""}`;
  } catch {
    return "unknown";
  }
}

async function main(): Promise<void> {
  const reportAt = process.argv.indexOf("--report");
  if (reportAt !== -1) {
    const file = process.argv[reportAt + 1];
    if (file === undefined) throw new Error("--report needs a results file");
    const results = JSON.parse(await readFile(file, "utf8")) as Results;
    process.stdout.write(report(results));
    return;
  }
  const scale = parseScale();
  const runs = Number(process.env.BENCH_RUNS ?? "3");
  const selected = only();
  const out = process.env.BENCH_OUT ?? path.join(repository, "test/bench/results.json");
  const scratchRoot = path.join(repository, ".bench/scratch");
  await mkdir(scratchRoot, { recursive: true });
  const scratch = await newScratch(scratchRoot, "run-");
  const startedAt = new Date();
  const load = os.loadavg()[0] ?? NaN;
  const t0 = performance.now();
  const ctx: BenchContext = {
    scale,
    runs,
    scratch,
    log: (message) => {
      const elapsed = ((performance.now() - t0) / 1000).toFixed(0).padStart(4);
      process.stderr.write(`[${elapsed} s] ${message}\n`);
    },
  };
  ctx.log(`pgcp-exporter benchmarks: scale ${scale}, ${runs} runs, ${[...selected].join(", ")}`);
  const results: { -readonly [K in keyof Results]: Results[K] } = {
    startedAt: startedAt.toISOString(),
    seconds: 0,
    scale,
    runs,
    commit: gitCommit(),
    machine: machine(load),
  };
  const save = async () => {
    results.seconds = (performance.now() - t0) / 1000;
    results.machine = machine(load);
    await writeJson(out, results);
  };
  try {
    if (selected.has("ingest")) {
      const oneProject: IngestPoint[] = [];
      const manyProjects: IngestPoint[] = [];
      // The largest point of each also runs once at log level warn.
      for (const operations of [10_000, 100_000, 1_000_000]) {
        const shape = { projects: 1, operationsPerProject: scaled(operations, scale) };
        oneProject.push(await measureIngest(ctx, shape, operations === 1_000_000));
      }
      for (const projects of [10, 100, 1000]) {
        const shape = { projects: scaled(projects, scale), operationsPerProject: 1000 };
        manyProjects.push(await measureIngest(ctx, shape, projects === 1000));
      }
      results.ingest = { oneProject, manyProjects };
      await save();
    }
    if (selected.has("scrape")) {
      results.scrape = [];
      for (const projects of [10, 100, 1000]) {
        results.scrape.push(await measureScrape(ctx, scaled(projects, scale), 300));
      }
      await save();
    }
    if (selected.has("requests")) {
      results.requests = [];
      for (const projects of [100, 1000, 10_000]) {
        results.requests.push(await measureCycleCost(ctx, scaled(projects, scale)));
      }
      await save();
    }
    if (selected.has("fleet")) {
      results.fleet = [];
      for (const projects of [10, 1000, 10_000]) {
        const p = scaled(projects, scale);
        results.fleet.push(
          await measureFleet(ctx, {
            projects: p,
            compression: compressionFor(p),
            failures: p <= 10 ? 40 : 150,
          }),
        );
      }
      await save();
    }
    if (selected.has("skewed")) {
      results.skewed = [];
      for (const projects of [1000, 10_000]) {
        const p = scaled(projects, scale);
        for (const strategy of ["uniform", "activity"] as const) {
          results.skewed.push(
            await measureSkewedFleet(ctx, {
              projects: p,
              strategy,
              compression: skewedCompressionFor(p),
              failures: 150,
            }),
          );
          await save();
        }
      }
    }
    if (selected.has("state")) {
      results.state = [];
      for (const projects of [100, 1000, 10_000]) {
        results.state.push(await measureState(ctx, scaled(projects, scale)));
      }
      await save();
    }
    if (selected.has("handover")) {
      const cli = path.join(repository, "dist/cli.js");
      if (!existsSync(cli)) throw new Error(`${cli} is missing: run npm run build first`);
      results.handover = await measureHandover(ctx, { projects: scaled(18, scale, 3), cli });
      await save();
    }
    if (selected.has("delivery")) {
      results.delivery = [];
      for (const projects of [1000, 10_000]) {
        results.delivery.push(await measureDelivery(ctx, scaled(projects, scale), 4));
      }
      await save();
    }
    if (selected.has("spans")) {
      const throughput = [];
      // 100,000 spans in shallower or deeper queues, the deepest full (after an outage).
      for (const [projects, spans] of [
        [1000, 100],
        [100, 1000],
        [10, SPAN_QUEUE_LIMIT],
      ] as const) {
        throughput.push(await measureSpanThroughput(ctx, scaled(projects, scale), spans));
      }
      results.spans = {
        throughput,
        timeToSpan: await measureTimeToSpan(ctx, scaled(1000, scale), 20),
        wireMemory: await measureWireMemory(ctx),
      };
      await save();
    }
  } finally {
    await removeScratch(scratch);
  }
  await save();
  ctx.log(`done in ${results.seconds.toFixed(0)} s; figures in ${out}`);
  process.stdout.write(report(results));
}

await main();
