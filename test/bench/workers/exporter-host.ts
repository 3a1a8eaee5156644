/**
 * A benchmark worker process that hosts the real exporter (`startExporter`: API client, state
 * store, syncs, scheduler, metrics, HTTP server) or one of the baselines it is compared with,
 * and runs what the driver asks for inside the process, so that timings and CPU and memory
 * figures belong to this process alone.
 */
import {
  PerformanceObserver,
  constants as perfConstants,
  monitorEventLoopDelay,
  type IntervalHistogram,
} from "node:perf_hooks";
import { closeSync, openSync, readSync } from "node:fs";
import { writeHeapSnapshot } from "node:v8";
import {
  setDaemonV8Flags,
  startExporter,
  startMemorySaver,
  type RunningExporter,
} from "../../../src/exporter/index.js";
import { resolveConfig, resolveSinks, type RawConfig } from "../../../src/config/index.js";
import { createLogger } from "../../../src/logger.js";
import {
  FileStateStore,
  STATE_FORMAT,
  STATE_VERSION,
  type ProjectState,
  type SpanRecord,
} from "../../../src/store/index.js";
import { emptyTotals, type PollOptions } from "../../../src/sync/index.js";
import { pollOptionsFrom } from "../../../src/daemon/index.js";
import { loadWire } from "../../../src/otlp/index.js";
import { apiReader } from "../lib/api-reader.js";
import { serve } from "../lib/rpc.js";
import { cpuMsSince, memorySnapshot, type MemorySnapshot } from "../lib/process-stats.js";

// As `pgcp-exporter run` does at its start: the figures are those of the daemon as it runs.
setDaemonV8Flags();
startMemorySaver();

let exporter: RunningExporter | undefined;
/** The running exporter's poll options, for the steps measured outside its scheduler. */
let pollOptions: PollOptions | undefined;
let loopDelay: IntervalHistogram | undefined;
let stalls: StallWatch | undefined;

/** A gap of the event loop longer than this (ms) is a stall, noted with its cause. */
const STALL_MS = 8;

/**
 * A stall of the event loop: how long, the collector's pauses that fell inside it, and (on
 * Linux) how long the main thread waited for a core in it, ready to run but not running.
 */
export interface Stall {
  readonly ms: number;
  readonly gcMs: number;
  readonly gcKinds: string;
  readonly waitedMs?: number;
  /**
   * When it began and ended, in µs of the monotonic clock that V8's CPU profiles date their
   * samples with (`stall-profile.ts` reads a profile's samples between them).
   */
  readonly fromUs?: number;
  readonly toUs?: number;
}

/**
 * The main thread's scheduler statistics (`/proc/<pid>/task/<pid>/schedstat`: time on a core,
 * time waiting for one, in ns), read through one open descriptor; undefined where there is none.
 */
class ThreadSchedStat {
  readonly #fd: number | undefined;
  readonly #buffer = Buffer.alloc(128);

  constructor() {
    try {
      this.#fd = openSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, "r");
    } catch {
      this.#fd = undefined;
    }
  }

  /** Milliseconds the main thread has waited for a core since it started. */
  waitedMs(): number | undefined {
    if (this.#fd === undefined) return undefined;
    const bytes = readSync(this.#fd, this.#buffer, 0, this.#buffer.length, 0);
    const waitedNs = Number(this.#buffer.toString("latin1", 0, bytes).split(" ")[1]);
    return Number.isFinite(waitedNs) ? waitedNs / 1e6 : undefined;
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
  }
}

const GC_KINDS: Record<number, string> = {
  [perfConstants.NODE_PERFORMANCE_GC_MINOR]: "scavenge",
  [perfConstants.NODE_PERFORMANCE_GC_MAJOR]: "mark-compact",
  [perfConstants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
  [perfConstants.NODE_PERFORMANCE_GC_WEAKCB]: "weak callbacks",
};

/**
 * Watches for stalls: a 1 ms timer notes each gap of more than `thresholdMs` between its
 * calls, the collector's pauses (`gc` performance entries) that fall inside each gap, and the
 * time the main thread waited for a core in it, so that a stall can be put down to garbage
 * collection, to a machine with more runnable threads than cores, or to the program's own work.
 */
class StallWatch {
  readonly #gaps: {
    start: number;
    end: number;
    waitedMs: number | undefined;
    fromUs: number;
    toUs: number;
  }[] = [];
  readonly #sched = new ThreadSchedStat();
  #lastWaited = this.#sched.waitedMs();
  readonly #pauses: { start: number; end: number; kind: string }[] = [];
  readonly #observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e.toJSON() as { detail?: { kind?: number } }).detail?.kind ?? -1;
      this.#pauses.push({
        start: e.startTime,
        end: e.startTime + e.duration,
        kind: GC_KINDS[kind] ?? "other",
      });
    }
  });
  readonly #timer: NodeJS.Timeout;
  #lastUs = monotonicUs();
  #last = performance.now();

  constructor(thresholdMs: number) {
    this.#observer.observe({ entryTypes: ["gc"] });
    this.#timer = setInterval(() => {
      const now = performance.now();
      const nowUs = monotonicUs();
      const waited = this.#sched.waitedMs();
      if (now - this.#last > thresholdMs) {
        const waitedMs =
          waited === undefined || this.#lastWaited === undefined
            ? undefined
            : waited - this.#lastWaited;
        this.#gaps.push({
          start: this.#last,
          end: now,
          waitedMs,
          fromUs: this.#lastUs,
          toUs: nowUs,
        });
      }
      this.#last = now;
      this.#lastUs = nowUs;
      this.#lastWaited = waited;
    }, 1);
  }

  /** Stops watching; the stalls seen, longest first. */
  stop(): Stall[] {
    clearInterval(this.#timer);
    this.#observer.disconnect();
    this.#sched.close();
    return this.#gaps
      .map(({ start, end, waitedMs, fromUs, toUs }) => {
        const inside = this.#pauses.filter((p) => p.end > start && p.start < end);
        return {
          ms: end - start,
          gcMs: inside.reduce((sum, p) => sum + (p.end - p.start), 0),
          gcKinds: [...new Set(inside.map((p) => p.kind))].join("+"),
          ...(waitedMs === undefined ? {} : { waitedMs }),
          fromUs,
          toUs,
        };
      })
      .sort((a, b) => b.ms - a.ms);
  }
}

/** The monotonic clock in µs (`process.hrtime`), the clock of V8's CPU profiles. */
function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** Where the time of all the stalls went, in ms (see `StallCauses`). */
function stallCauses(seen: readonly Stall[]): StallCauses {
  let collecting = 0;
  let waiting = 0;
  let total = 0;
  for (const stall of seen) {
    total += stall.ms;
    collecting += Math.min(stall.gcMs, stall.ms);
    waiting += Math.min(stall.waitedMs ?? 0, stall.ms - Math.min(stall.gcMs, stall.ms));
  }
  return { totalMs: total, collectingMs: collecting, waitingMs: waiting };
}

/**
 * The stalls' time, summed: all of it, the collector's pauses inside them, and the main
 * thread's waits for a core (at most what the pauses leave of each stall). The rest is the
 * program's own work, or what neither measure sees.
 */
export interface StallCauses {
  readonly totalMs: number;
  readonly collectingMs: number;
  readonly waitingMs: number;
}

function running(): RunningExporter {
  if (exporter === undefined) throw new Error("the exporter is not started");
  return exporter;
}

export interface StartArgs {
  readonly config: RawConfig;
  /** Environment for the sinks' secrets (`PGCP_WEBHOOK_URL`, …). */
  readonly env?: Record<string, string>;
  /** Log level of the exporter's JSON log (standard output, /dev/null). Default `info`. */
  readonly logLevel?: string;
}

export interface CatchUpResult {
  readonly ms: number;
  readonly cpuMs: number;
  readonly rounds: number;
  readonly counted: number;
  readonly memory: MemorySnapshot;
}

export interface BaselineArgs {
  readonly apiUrl: string;
  readonly apiKey: string;
  readonly projectIds: readonly string[];
  readonly firstPageLimit: number;
  readonly pageLimit: number;
  readonly concurrency: number;
}

export interface BaselineResult {
  readonly ms: number;
  readonly cpuMs: number;
  readonly operations: number;
  readonly pages: number;
  readonly memory: MemorySnapshot;
}

export interface Progress {
  /** Committed end-state arrivals, over every project. */
  readonly counted: number;
  /** Projects with a catch-up segment open. */
  readonly catchingUp: number;
  /** Projects with no committed state yet. */
  readonly missing: number;
  /** Sum of the committed states' sequence numbers: grows by one per commit. */
  readonly commits: number;
  /** Operations followed (open, or failed and watched). */
  readonly tracked: number;
}

function progress(e: RunningExporter): Progress {
  let counted = 0;
  let catchingUp = 0;
  let missing = 0;
  let commits = 0;
  let tracked = 0;
  for (const id of e.daemon.projects()) {
    const state = e.daemon.project(id)?.state;
    if (state === undefined) {
      missing += 1;
      continue;
    }
    if (state.segment !== null) catchingUp += 1;
    commits += state.sequence;
    tracked += state.tracked.length;
    for (const a of state.totals.arrivals) counted += a.count;
  }
  return { counted, catchingUp, missing, commits, tracked };
}

const handlers = {
  /**
   * Writes a committed checkpoint for each project, as a daemon that stopped at `second` would
   * have left it: whatever the log holds after that second is new to the exporter.
   */
  async writeStates(args: {
    dir: string;
    projects: readonly { id: string; second: number }[];
  }): Promise<{ ms: number }> {
    const started = performance.now();
    const store = new FileStateStore(args.dir);
    await store.open();
    const now = Date.now();
    for (const p of args.projects) {
      const state: ProjectState = {
        format: STATE_FORMAT,
        version: STATE_VERSION,
        projectId: p.id,
        sequence: 1,
        committedAtMs: now,
        watermark: { second: p.second, ids: [] },
        segment: null,
        tracked: [],
        totals: emptyTotals(),
        outbox: [],
        deadLetters: [],
      };
      await store.commit(state);
    }
    // Lets go of the directory: the exporter started next in this process takes it.
    await store.close();
    return { ms: performance.now() - started };
  },

  async start(args: StartArgs): Promise<{ url: string; startMs: number; memory: MemorySnapshot }> {
    const started = performance.now();
    const config = resolveConfig("bench", [args.config]);
    const logger = createLogger(args.logLevel ?? "info", undefined, "json");
    const env = { ...process.env, ...(args.env ?? {}) };
    exporter = await startExporter(config, { logger, env, sinks: resolveSinks(config, env) });
    pollOptions = pollOptionsFrom(config);
    return {
      url: exporter.server.url,
      startMs: performance.now() - started,
      memory: memorySnapshot(),
    };
  },

  /** Polls every project until `expected` arrivals are committed and no catch-up is open. */
  async catchUp(args: { expected: number; maxRounds?: number }): Promise<CatchUpResult> {
    const e = running();
    const cpu = process.cpuUsage();
    const started = performance.now();
    let rounds = 0;
    let p = progress(e);
    while (p.counted < args.expected || p.catchingUp > 0) {
      if (rounds >= (args.maxRounds ?? 100_000)) {
        throw new Error(`no catch-up after ${rounds} rounds: ${JSON.stringify(p)}`);
      }
      await e.daemon.pollAll();
      rounds += 1;
      p = progress(e);
    }
    const ms = performance.now() - started;
    return { ms, cpuMs: cpuMsSince(cpu), rounds, counted: p.counted, memory: memorySnapshot() };
  },

  /**
   * One poll and commit of each of `projectIds`, one after another (`ProjectSync.step`, as the
   * scheduler runs it), and then a commit of the same state again through the store alone.
   * Returns per project: the step's time, the commit's time, and the bytes of the document.
   */
  async steps(args: { projectIds: readonly string[] }) {
    const e = running();
    const out: { stepMs: number; commitMs: number; bytes: number; outcome: string }[] = [];
    for (const id of args.projectIds) {
      const sync = e.daemon.project(id);
      if (sync === undefined) throw new Error(`no project ${id}`);
      const t0 = performance.now();
      if (pollOptions === undefined) throw new Error("the exporter is not started");
      const outcome = await sync.step(Date.now(), pollOptions);
      const stepMs = performance.now() - t0;
      const state = sync.state;
      if (state === undefined) throw new Error(`no state for ${id}`);
      const t1 = performance.now();
      await e.daemon.store.commit(state);
      const commitMs = performance.now() - t1;
      out.push({
        stepMs,
        commitMs,
        bytes: Buffer.byteLength(JSON.stringify(state)),
        outcome: outcome.kind,
      });
    }
    return out;
  },

  async pollAll(): Promise<{ ms: number }> {
    const started = performance.now();
    await running().daemon.pollAll();
    return { ms: performance.now() - started };
  },

  progress: () => progress(running()),

  /** The scheduler's budget and the intervals it polls at now. */
  scheduler() {
    const [account] = running().daemon.accounts;
    if (account === undefined) throw new Error("the exporter runs one account");
    const { scheduler } = account;
    return {
      budget: scheduler.budget,
      // The interval a project without open operations waits at most (an idle fleet's).
      baseIntervalSeconds: scheduler.tierIntervalSeconds("idle"),
      fastIntervalSeconds: scheduler.tierIntervalSeconds("fast"),
      activeIntervalSeconds: scheduler.tierIntervalSeconds("active"),
      maxIntervalSeconds: scheduler.maxIntervalSeconds(),
    };
  },

  /** Outbox entries still waiting, over every project. */
  outbox() {
    const e = running();
    let waiting = 0;
    let dead = 0;
    for (const id of e.daemon.projects()) {
      const state = e.daemon.project(id)?.state;
      waiting += state?.outbox.length ?? 0;
      dead += state?.deadLetters.length ?? 0;
    }
    return { waiting, dead };
  },

  async refreshMetrics(): Promise<{ ms: number; bytes: number }> {
    const started = performance.now();
    await running().metrics.refresh();
    // Lent, as a scrape reads it: a rendering read through `current()` is never written into again.
    const { rendering, release } = running().metrics.lend();
    release();
    return { ms: performance.now() - started, bytes: rendering.body.length };
  },

  memory: () => memorySnapshot(),

  /** Loads OpenTelemetry's packages, as the span export's first request does. */
  async loadWire(): Promise<void> {
    await loadWire();
  },

  /** One export of `spans` to `url` (`http/protobuf`), as the span export's first request. */
  async sendSpans(args: { url: string; spans: readonly SpanRecord[] }): Promise<boolean> {
    const target = {
      url: args.url,
      protocol: "http/protobuf" as const,
      headers: {},
      timeoutMs: 10_000,
    };
    const sender = (await loadWire()).spanSender(target, { "service.name": "pgcp-exporter" });
    return (await sender.send(args.spans)).ok;
  },

  gc(): MemorySnapshot {
    globalThis.gc?.();
    return memorySnapshot();
  },

  /** Writes a V8 heap snapshot of this process to `file` (BENCH_HEAP_SNAPSHOT). */
  heapSnapshot(args: { file: string }): { file: string } {
    return { file: writeHeapSnapshot(args.file) };
  },

  startLoopDelay(): void {
    loopDelay?.disable();
    loopDelay = monitorEventLoopDelay({ resolution: 1 });
    loopDelay.enable();
    stalls?.stop();
    stalls = new StallWatch(STALL_MS);
  },

  /**
   * Event-loop delay since `startLoopDelay`, in ms, and the ten longest stalls of more than
   * `STALL_MS`, with the collector's part in each.
   */
  stopLoopDelay() {
    const h = loopDelay;
    if (h === undefined) throw new Error("startLoopDelay was not called");
    h.disable();
    loopDelay = undefined;
    const seen = stalls?.stop() ?? [];
    stalls = undefined;
    return {
      p50: h.percentile(50) / 1e6,
      p99: h.percentile(99) / 1e6,
      max: h.max / 1e6,
      mean: h.mean / 1e6,
      stalls: seen.length,
      longestStalls: seen.slice(0, 10),
      stallCauses: stallCauses(seen),
    };
  },

  async stop(): Promise<{ ms: number }> {
    const started = performance.now();
    await exporter?.stop();
    exporter = undefined;
    return { ms: performance.now() - started };
  },

  /**
   * The ingest baseline: the same pages as the exporter's walk (a first page of
   * `firstPageLimit`, then `pageLimit`, down to the end of each log), fetched with undici over
   * a pool of `concurrency` connections and parsed with `JSON.parse`, and nothing else.
   */
  async baseline(args: BaselineArgs): Promise<BaselineResult> {
    const api = apiReader(args.apiUrl, args.apiKey, args.concurrency);
    const queue = [...args.projectIds];
    let operations = 0;
    let pages = 0;
    const walkOne = async (projectId: string) => {
      let cursor: string | undefined;
      let limit = args.firstPageLimit;
      for (;;) {
        const query = cursor === undefined ? `limit=${limit}` : `limit=${limit}&cursor=${cursor}`;
        const page = (await api.get(`/projects/${projectId}/operations?${query}`)) as {
          operations: unknown[];
          pagination?: { cursor: string };
        };
        pages += 1;
        operations += page.operations.length;
        if (page.operations.length < limit || page.pagination === undefined) return;
        cursor = encodeURIComponent(page.pagination.cursor);
        limit = args.pageLimit;
      }
    };
    const cpu = process.cpuUsage();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: Math.min(args.concurrency, queue.length) }, async () => {
        for (let id = queue.shift(); id !== undefined; id = queue.shift()) await walkOne(id);
      }),
    );
    const ms = performance.now() - started;
    const cpuMs = cpuMsSince(cpu);
    await api.close();
    return { ms, cpuMs, operations, pages, memory: memorySnapshot() };
  },
};

export type ExporterHost = typeof handlers;

serve(handlers);
