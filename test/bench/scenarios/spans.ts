/**
 * Scenario 9 (the span export), in this process: `SpanExport` drains the span queues of projects
 * whose states are committed in a file store (a `ProjectSync` each, as the roster's owners are),
 * in `http/protobuf`, to the local OTLP receiver (`test/support/otlp-receiver.ts`).
 *
 * - Throughput: spans per second from queued (committed in the queues of `projects` projects) to
 *   acknowledged (every queue empty on disk). **Baseline**: OpenTelemetry's exporter alone
 *   (`loadWire().spanSender`) sends the same batches, with no queue and no commits: the ratio of
 *   the times is the cost of durability. The runs alternate which side goes first; the batches
 *   are those the first export sent, read back from the receiver.
 * - Time to span: from spans committed in one project's queue (and `wake`) to the receiver
 *   having them, the export otherwise idle; against the same spans sent by the exporter alone.
 * - Memory: a fresh exporter process's RSS and heap before and after `loadWire()`, and after a
 *   first export.
 */
import { randomUUID } from "node:crypto";
import { resolveConfig, resolveOtlp, type ResolvedOtlp } from "../../../src/config/index.js";
import { systemClock } from "../../../src/clock.js";
import { createLogger } from "../../../src/logger.js";
import { SpanExport, loadWire, type SpanQueueOwner } from "../../../src/otlp/index.js";
import {
  FileStateStore,
  STATE_FORMAT,
  STATE_VERSION,
  addToSpanQueue,
  spanKey,
  type OperationSpan,
  type ProjectState,
  type QueuedSpan,
  type SpanRecord,
} from "../../../src/store/index.js";
import { emptyTotals, type ProjectSync } from "../../../src/sync/index.js";
import { neverPollingSync } from "../../support/never-polling-sync.js";
import {
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from "../../support/otlp-receiver.js";
import { sleep } from "../../support/wait.js";
import {
  newScratch,
  removeScratch,
  startExporterWorker,
  type BenchContext,
} from "../lib/context.js";
import type { MemorySnapshot } from "../lib/process-stats.js";
import { median, quantile, summarize, type Summary } from "../lib/stats.js";

export interface SpansThroughput {
  readonly projects: number;
  readonly spansPerProject: number;
  readonly spans: number;
  readonly batchSize: number;
  /** Spans per second, queued to acknowledged; the baseline's sent to answered. */
  readonly exportSpansPerSecond: Summary;
  readonly baselineSpansPerSecond: Summary;
  /** The export's time ÷ the baseline's, per run. */
  readonly timeRatio: Summary;
  readonly requestsPer1000Spans: number;
  readonly commitsPer1000Spans: number;
  /** Spans the receiver got more than once in the first export (0 expected). */
  readonly repeats: number;
}

export interface TimeToSpan {
  readonly projects: number;
  readonly samples: number;
  readonly spansPerCommit: number;
  /** The commit that queues the spans, ms. */
  readonly commitMs: { readonly p50: number; readonly p90: number };
  /** From `wake` (the spans committed) to the receiver having them, ms. */
  readonly exportMs: { readonly p50: number; readonly p90: number };
  /** The exporter alone: from `send` to the receiver having them, ms. */
  readonly baselineMs: { readonly p50: number; readonly p90: number };
}

export interface SpansResults {
  readonly throughput: SpansThroughput[];
  readonly timeToSpan: TimeToSpan;
  /**
   * A fresh exporter process after a collection: before and after `loadWire()`, and after a
   * first export of 512 spans.
   */
  readonly wireMemory: {
    readonly before: MemorySnapshot;
    readonly loaded: MemorySnapshot;
    readonly exported: MemorySnapshot;
  };
}

/** Spans one poll-like commit adds in the time-to-span samples. */
const SPANS_PER_COMMIT = 5;

const ACTIONS = [
  "start_compute",
  "suspend_compute",
  "apply_config",
  "create_branch",
  "create_timeline",
  "apply_storage_config",
  "check_availability",
];

/** An attempt that ended, as a poll queues it: one in ten failed. */
function operationSpan(projectId: string, i: number, nowMs: number): OperationSpan {
  const failed = i % 10 === 9;
  return {
    kind: "operation",
    operationId: randomUUID(),
    attempt: 1,
    projectId,
    projectName: `bench ${projectId}`,
    branchId: `br-${projectId}`,
    branchName: "main",
    endpointId: `ep-${projectId}`,
    regionId: "aws-us-east-2",
    action: ACTIONS[i % ACTIONS.length] ?? "apply_config",
    status: failed ? "failed" : "finished",
    failuresCount: failed ? 1 : 0,
    ...(failed ? { error: "compute start timed out: safekeeper quorum not reached" } : {}),
    startMs: nowMs - 4000 - (i % 7) * 1000,
    endMs: nowMs - (i % 3) * 500,
  };
}

function projectState(projectId: string, spans: readonly QueuedSpan[]): ProjectState {
  const nowMs = Date.now();
  return {
    format: STATE_FORMAT,
    version: STATE_VERSION,
    projectId,
    sequence: 1,
    committedAtMs: nowMs,
    watermark: { second: Math.floor(nowMs / 1000), ids: [] },
    segment: null,
    tracked: [],
    totals: emptyTotals(),
    outbox: [],
    deadLetters: [],
    ...(spans.length === 0 ? {} : { spans: [...spans] }),
  };
}

/** Projects in a file store in `dir`, `spansPerProject` spans committed in each one's queue. */
async function queuedProjects(dir: string, projects: number, spansPerProject: number) {
  const store = new FileStateStore(dir);
  await store.open();
  const syncs: ProjectSync[] = [];
  const nowMs = Date.now();
  for (let p = 0; p < projects; p++) {
    const projectId = `bench-${String(p)}`;
    const queue = Array.from({ length: spansPerProject }, (_, i) => ({
      span: operationSpan(projectId, i, nowMs),
      queuedAtMs: nowMs,
    }));
    await store.commit(projectState(projectId, queue));
    const sync = neverPollingSync(projectId, store).sync;
    await sync.load();
    syncs.push(sync);
  }
  return { store, syncs };
}

/**
 * The export's owners over `syncs`: commits counted, `drained` resolved by the commit that
 * empties the last queue.
 */
function countingOwners(syncs: readonly ProjectSync[]) {
  let queued = syncs.reduce((n, s) => n + (s.state?.spans?.length ?? 0), 0);
  let drain: () => void = () => undefined;
  const drained = new Promise<void>((resolve) => {
    drain = resolve;
  });
  const counts = { commits: 0 };
  const owners = new Map<string, SpanQueueOwner>();
  for (const sync of syncs) {
    owners.set(sync.projectId, {
      projectId: sync.projectId,
      get state() {
        return sync.state;
      },
      updateOutbox: async (nowMs, change) => {
        const before = sync.state?.spans?.length ?? 0;
        const changed = await sync.updateOutbox(nowMs, change);
        counts.commits += 1;
        queued -= before - (sync.state?.spans?.length ?? 0);
        if (queued === 0) drain();
        return changed;
      },
    });
  }
  return { owners, counts, drained };
}

/** The span export's settings, as `run` resolves them for a collector at the receiver. */
type Traces = NonNullable<ResolvedOtlp["traces"]>;

function otlpTo(receiver: OtlpReceiver): { target: Traces; resource: ResolvedOtlp["resource"] } {
  const config = resolveConfig("bench", [
    { api: { key: "unused" }, projects: ["bench-0"], otlp: { endpoint: receiver.url } },
  ]);
  const { traces, resource } = resolveOtlp(config, {});
  if (traces === undefined) throw new Error("the span export is off");
  return { target: traces, resource };
}

function spanExport(
  otlp: ReturnType<typeof otlpTo>,
  owners: ReadonlyMap<string, SpanQueueOwner>,
): SpanExport {
  return new SpanExport({
    ...otlp,
    owner: (projectId) => owners.get(projectId),
    projects: () => owners.values(),
    logger: createLogger("silent"),
    clock: systemClock,
  });
}

/**
 * One export of every queue, from its start to the commit that empties the last queue; then
 * every state file is read back. Also gives the records queued, by `spanKey`.
 */
async function drainOnce(
  ctx: BenchContext,
  otlp: ReturnType<typeof otlpTo>,
  projects: number,
  spansPerProject: number,
) {
  const dir = await newScratch(ctx.scratch, "spans-");
  try {
    const { store, syncs } = await queuedProjects(dir, projects, spansPerProject);
    const records = new Map<string, SpanRecord>();
    for (const sync of syncs) {
      for (const { span } of sync.state?.spans ?? []) records.set(spanKey(span), span);
    }
    const { owners, counts, drained } = countingOwners(syncs);
    const exporting = spanExport(otlp, owners);
    const started = performance.now();
    exporting.start();
    await drained;
    const ms = performance.now() - started;
    await exporting.stop();
    for (const sync of syncs) {
      const state = await store.load(sync.projectId);
      if ((state?.spans?.length ?? 0) > 0) throw new Error(`spans left in ${sync.projectId}`);
    }
    await store.close();
    return { ms, commits: counts.commits, records };
  } finally {
    await removeScratch(dir);
  }
}

/** The requests the receiver took, as the span records each carried. */
function sentBatches(received: readonly ReceivedSpan[], records: ReadonlyMap<string, SpanRecord>) {
  const batches = new Map<number, SpanRecord[]>();
  for (const span of received) {
    const { "pgcp.operation.id": id, "pgcp.operation.attempt": attempt } = span.attributes;
    const record = records.get(`operation:${String(id)}:${String(attempt)}`);
    if (record === undefined)
      throw new Error(`the receiver got a span never queued: ${String(id)}`);
    const batch = batches.get(span.request) ?? [];
    batch.push(record);
    batches.set(span.request, batch);
  }
  return [...batches.values()];
}

export async function measureSpanThroughput(
  ctx: BenchContext,
  projects: number,
  spansPerProject: number,
): Promise<SpansThroughput> {
  const spans = projects * spansPerProject;
  ctx.log(`spans: the export of ${projects} x ${spansPerProject} queued spans, ${ctx.runs} runs`);
  const receiver = await startOtlpReceiver();
  const otlp = otlpTo(receiver);
  // Loaded before either side is timed (the export loads it at its first request).
  const wire = await loadWire();
  try {
    const exportRun = async () => {
      receiver.receiver.clear();
      return drainOnce(ctx, otlp, projects, spansPerProject);
    };
    const baselineRun = async (batches: readonly SpanRecord[][]) => {
      receiver.receiver.clear();
      const sender = wire.spanSender(otlp.target, otlp.resource);
      const started = performance.now();
      for (const batch of batches) {
        const outcome = await sender.send(batch);
        if (!outcome.ok) throw new Error(`the baseline's export failed: ${outcome.detail}`);
      }
      const ms = performance.now() - started;
      await sender.shutdown();
      return ms;
    };
    // A first export, untimed, warms both sides up and gives the baseline its batches.
    const first = await exportRun();
    const received = receiver.spans();
    const distinct = new Set(received.map((s) => s.spanId)).size;
    if (distinct !== spans) throw new Error(`the receiver got ${distinct} of ${spans} spans`);
    const requests = receiver.receiver.requests.length;
    const batches = sentBatches(received, first.records);
    await baselineRun(batches);

    const exportRates: number[] = [];
    const baselineRates: number[] = [];
    const ratios: number[] = [];
    for (let run = 0; run < ctx.runs; run++) {
      // Each side goes first in turn.
      let exportMs: number;
      let baselineMs: number;
      if (run % 2 === 0) {
        baselineMs = await baselineRun(batches);
        exportMs = (await exportRun()).ms;
      } else {
        exportMs = (await exportRun()).ms;
        baselineMs = await baselineRun(batches);
      }
      exportRates.push(spans / (exportMs / 1000));
      baselineRates.push(spans / (baselineMs / 1000));
      ratios.push(exportMs / baselineMs);
    }
    return {
      projects,
      spansPerProject,
      spans,
      batchSize: otlp.target.batchSize,
      exportSpansPerSecond: summarize(exportRates),
      baselineSpansPerSecond: summarize(baselineRates),
      timeRatio: summarize(ratios),
      requestsPer1000Spans: (requests / spans) * 1000,
      commitsPer1000Spans: (first.commits / spans) * 1000,
      repeats: received.length - distinct,
    };
  } finally {
    await receiver.close();
  }
}

export async function measureTimeToSpan(
  ctx: BenchContext,
  projects: number,
  samples: number,
): Promise<TimeToSpan> {
  ctx.log(
    `spans: time to span, ${samples} commits of ${SPANS_PER_COMMIT} among ${projects} projects`,
  );
  const receiver = await startOtlpReceiver();
  const otlp = otlpTo(receiver);
  const sender = (await loadWire()).spanSender(otlp.target, otlp.resource);
  const dir = await newScratch(ctx.scratch, "spans-");
  const { store, syncs } = await queuedProjects(dir, projects, 0);
  const exporting = spanExport(otlp, countingOwners(syncs).owners);
  exporting.start();
  /** From `send()` to the receiver having a new request, ms. */
  const arrival = async (send: () => unknown) => {
    const before = receiver.receiver.requests.length;
    const started = performance.now();
    const sending = send();
    await receiver.receiver.waitFor((requests) => requests.length > before);
    const ms = performance.now() - started;
    await sending;
    return ms;
  };
  const commitMs: number[] = [];
  const exportMs: number[] = [];
  const baselineMs: number[] = [];
  try {
    // Sample 0 warms up: each side's first request opens its connection.
    for (let i = 0; i <= samples; i++) {
      const sync = syncs[(i * 7919) % syncs.length];
      if (sync === undefined) throw new Error("no project");
      const nowMs = Date.now();
      const added = Array.from({ length: SPANS_PER_COMMIT }, (_, k) => ({
        span: operationSpan(sync.projectId, k, nowMs),
        queuedAtMs: nowMs,
      }));
      const committing = performance.now();
      // As a poll commits its spans (`ProjectSync.step`): onto the latest queue, in one write.
      await sync.updateOutbox(nowMs, (state) => ({
        outbox: state.outbox,
        deadLetters: state.deadLetters,
        spanQueue: {
          queue: addToSpanQueue(state.spans ?? [], added).queue,
          deadLetters: state.spanDeadLetters ?? [],
        },
      }));
      const commit = performance.now() - committing;
      const viaExport = async () => {
        const ms = await arrival(() => {
          exporting.wake(sync.projectId);
        });
        // Its queue committed empty: the export is idle again.
        await exporting.idle();
        return ms;
      };
      const alone = () => arrival(() => sender.send(added.map((q) => q.span)));
      // Each goes first in turn.
      let exported: number;
      let raw: number;
      if (i % 2 === 0) {
        exported = await viaExport();
        raw = await alone();
      } else {
        raw = await alone();
        exported = await viaExport();
      }
      if (i > 0) {
        commitMs.push(commit);
        exportMs.push(exported);
        baselineMs.push(raw);
      }
      await sleep(50);
    }
    return {
      projects,
      samples,
      spansPerCommit: SPANS_PER_COMMIT,
      commitMs: { p50: median(commitMs), p90: quantile(commitMs, 0.9) },
      exportMs: { p50: median(exportMs), p90: quantile(exportMs, 0.9) },
      baselineMs: { p50: median(baselineMs), p90: quantile(baselineMs, 0.9) },
    };
  } finally {
    await exporting.stop();
    await sender.shutdown();
    await store.close();
    await removeScratch(dir);
    await receiver.close();
  }
}

/**
 * A fresh exporter process (bundled, with the image's flags) after a collection: before and
 * after `loadWire()`, and after a first export of a batch.
 */
export async function measureWireMemory(ctx: BenchContext): Promise<SpansResults["wireMemory"]> {
  ctx.log("spans: an exporter process's memory before and after loading OpenTelemetry's packages");
  const receiver = await startOtlpReceiver();
  const host = await startExporterWorker();
  try {
    const before = await host.run("gc");
    await host.run("loadWire");
    const loaded = await host.run("gc");
    const nowMs = Date.now();
    const spans = Array.from({ length: 512 }, (_, i) =>
      operationSpan(`bench-${String(i)}`, i, nowMs),
    );
    const ok = await host.run("sendSpans", { url: otlpTo(receiver).target.url, spans });
    if (!ok) throw new Error("the exporter process's export failed");
    const exported = await host.run("gc");
    return { before, loaded, exported };
  } finally {
    await host.close();
    await receiver.close();
  }
}
