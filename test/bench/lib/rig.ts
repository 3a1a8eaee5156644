/**
 * The usual set-up of a bench scenario: a simulator worker, an exporter worker and a scratch
 * directory, started before a measurement and closed after it, however it ends.
 */
import type { SimStartArgs } from "../workers/sim-host.js";
import {
  newScratch,
  removeScratch,
  startExporterWorker,
  startSimWorker,
  type BenchContext,
  type ExporterWorker,
  type SimWorker,
} from "./context.js";

export interface BenchRig {
  readonly sim: SimWorker;
  readonly worker: ExporterWorker;
  /** The scratch directory, below the run's. */
  readonly dir: string;
}

export interface RigOptions {
  /** The prefix of the scratch directory's name. */
  readonly prefix: string;
  /** How the simulator is started (default: `startSimWorker`'s). */
  readonly sim?: Partial<SimStartArgs>;
}

/** Starts the rig, runs `measure` on it, and closes the workers and removes the directory. */
export async function withRig<T>(
  ctx: BenchContext,
  options: RigOptions,
  measure: (rig: BenchRig) => Promise<T>,
): Promise<T> {
  const sim = await startSimWorker(options.sim);
  const worker = await startExporterWorker();
  const dir = await newScratch(ctx.scratch, options.prefix);
  try {
    return await measure({ sim, worker, dir });
  } finally {
    await worker.close();
    await sim.close();
    await removeScratch(dir);
  }
}
