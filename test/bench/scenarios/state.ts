/**
 * Scenario 5 (commit and start-up), for `projects` projects with a realistic committed state
 * (a history of about 40 operations each over 10 actions, 10 endpoints, one failed operation
 * still watched):
 *
 * - the cost of one project's commit while the others stay as they are: 50 projects, each
 *   given one new operation, are polled and committed one at a time (`ProjectSync.step`), and
 *   the same state is committed again through the store alone; bytes are the document's;
 * - the bytes on disk over all projects, and memory with every state loaded;
 * - start-up: a fresh process starting the exporter on that state directory (reading and
 *   validating every state file, restoring the counters, the first rendering).
 */
import { stat, readdir } from "node:fs/promises";
import path from "node:path";
import {
  API_KEY,
  newScratch,
  removeScratch,
  startExporterWorker,
  startSimWorker,
  type BenchContext,
} from "../lib/context.js";
import type { MemorySnapshot } from "../lib/process-stats.js";
import { median, quantile } from "../lib/stats.js";
import type { ExporterHost } from "../workers/exporter-host.js";

export interface StatePoint {
  readonly projects: number;
  /** Per commit of one project (median and p90 of 50), ms; the store's write alone too. */
  readonly stepMs: { readonly p50: number; readonly p90: number };
  readonly commitMs: { readonly p50: number; readonly p90: number };
  /** Bytes one commit writes (median document size). */
  readonly bytesPerCommit: number;
  /** Bytes of every state file together. */
  readonly bytesOnDisk: number;
  /** Start-up of a fresh exporter on the state directory, seconds. */
  readonly startSeconds: number;
  /** The fresh exporter's memory right after start-up (every state loaded). */
  readonly memoryAfterStart: MemorySnapshot;
}

const SAMPLES = 50;

export async function measureState(ctx: BenchContext, projects: number): Promise<StatePoint> {
  ctx.log(`state: commits and start-up with ${projects} projects`);
  const sim = await startSimWorker();
  const dir = await newScratch(ctx.scratch, "state-");
  const stateDir = path.join(dir, "state");
  try {
    const seeded = await sim.run("seedBulk", { projects, operationsPerProject: 20 });
    await sim.run("addEndpoints", { projectIds: seeded.projectIds, endpoints: 10 });
    await sim.run("script", {
      operations: seeded.projectIds.map((projectId) => ({
        projectId,
        action: "apply_config",
        steps: [
          { status: "running", after_seconds: 0 },
          { status: "failed", after_seconds: 1, error: "bench" },
        ],
      })),
    });
    const { nowMs } = await sim.run("advance", { seconds: 60 });
    const config = {
      api: { url: sim.apiUrl, key: API_KEY, requestsPerMinute: 1e9, burstPerSecond: 1e9 },
      projects: seeded.projectIds,
      state: { dir: stateDir },
      listen: "127.0.0.1:0",
      poll: { interval: 1e6, fastInterval: 1e6, endpointsInterval: 0 },
    };
    const sample = seeded.projectIds.filter(
      (_, i) => i % Math.max(1, Math.floor(projects / SAMPLES)) === 0,
    );
    const first = await startExporterWorker();
    let steps: Awaited<ReturnType<ExporterHost["steps"]>>;
    try {
      await first.run("writeStates", {
        dir: stateDir,
        projects: seeded.projectIds.map((id) => ({
          id,
          second: Math.floor(nowMs / 1000) - 90_000,
        })),
      });
      await first.run("start", { config });
      await first.run("pollAll");
      await first.run("pollAll");
      await sim.run("script", {
        operations: sample.map((projectId) => ({
          projectId,
          action: "start_compute",
          steps: [{ status: "finished", after_seconds: 0 }],
        })),
      });
      steps = await first.run("steps", { projectIds: sample });
      await first.run("stop");
    } finally {
      await first.close();
    }
    let bytesOnDisk = 0;
    for (const name of await readdir(stateDir)) {
      bytesOnDisk += (await stat(path.join(stateDir, name))).size;
    }
    const second = await startExporterWorker();
    let startSeconds: number;
    let memoryAfterStart: MemorySnapshot;
    try {
      const started = await second.run("start", { config });
      startSeconds = started.startMs / 1000;
      // What stays: the garbage of reading the files collected first.
      memoryAfterStart = await second.run("gc");
      await second.run("stop");
    } finally {
      await second.close();
    }
    const stepMs = steps.map((s) => s.stepMs);
    const commitMs = steps.map((s) => s.commitMs);
    return {
      projects,
      stepMs: { p50: median(stepMs), p90: quantile(stepMs, 0.9) },
      commitMs: { p50: median(commitMs), p90: quantile(commitMs, 0.9) },
      bytesPerCommit: median(steps.map((s) => s.bytes)),
      bytesOnDisk,
      startSeconds,
      memoryAfterStart,
    };
  } finally {
    await sim.close();
    await removeScratch(dir);
  }
}
