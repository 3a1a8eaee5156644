import { US_PER_SECOND } from "../time.js";

/**
 * The local file cache statistics of a simulated compute (seed 2.5, rule 5): what
 * `neon_stat_file_cache` shows, since the compute last started.
 *
 * While the compute runs, `READS_PER_CU_SECOND` page reads per second and compute unit reach
 * the cache, at a hit ratio that follows from the working set against the cache size: a
 * working set that fits is served at `FITTING_HIT_RATIO` (the misses of new and changed
 * pages); a larger one at that ratio times cache / working set (uniform access over the
 * working set). A test may set the ratio outright. Each miss writes its page into the cache;
 * the cache holds the pages read so far, up to the working set or its size.
 */

/** The cache's page size. */
export const PAGE_BYTES = 8192;

const GIB = 1024 ** 3;

/** Seed 2.5's table: 0.8 GB of file cache at 0.25 CU, i.e. 3.2 GB per compute unit. */
const CACHE_GIB_PER_CU = 3.2;

/** Page reads per second per compute unit that reach the file cache while the compute runs. */
export const READS_PER_CU_SECOND = 2000;

/** The hit ratio of a working set that fits in the cache, in percent. */
export const FITTING_HIT_RATIO = 99.9;

/** The working set of an endpoint no test has set one for: it fits every size's cache. */
export const DEFAULT_WORKING_SET_BYTES = 512 * 1024 ** 2;

/** The file cache of a compute of `cu` units, in bytes (seed 2.5's table). */
export function fileCacheBytes(cu: number): number {
  return Math.round(cu * CACHE_GIB_PER_CU * GIB);
}

/** The hit ratio (percent) a working set runs at against a cache of `cacheBytes`. */
export function modelHitRatio(workingSetBytes: number, cacheBytes: number): number {
  if (workingSetBytes <= cacheBytes) return FITTING_HIT_RATIO;
  return (FITTING_HIT_RATIO * cacheBytes) / workingSetBytes;
}

/** What the view shows; `hitRatio` is null while nothing was read. */
export interface FileCacheCounters {
  readonly misses: number;
  readonly hits: number;
  /** Pages in the cache. */
  readonly used: number;
  readonly writes: number;
  readonly hitRatio: number | null;
}

/** How the cache is used from some instant on (until the next change). */
export interface FileCacheLoad {
  readonly readsPerSecond: number;
  /** Percent. */
  readonly hitRatio: number;
  /** The most the cache can hold for this working set: min(working set, cache size). */
  readonly capacityBytes: number;
}

/**
 * The counters of one run of a compute, accumulated piecewise: each change of load (a new
 * ratio or working set) folds the reads so far at the old load first.
 */
export class FileCacheRun {
  private reads = 0;
  private hits = 0;
  private foldedUs: number;
  private stoppedUs: number | undefined;

  constructor(
    startedUs: number,
    private load: FileCacheLoad,
  ) {
    this.foldedUs = startedUs;
  }

  /** From `nowUs` on, the cache is used as `load` says. */
  change(nowUs: number, load: FileCacheLoad): void {
    this.fold(nowUs);
    this.load = load;
  }

  /** The compute stopped: the counters stand still from `nowUs` on. */
  stop(nowUs: number): void {
    this.fold(nowUs);
    this.stoppedUs ??= nowUs;
  }

  counters(nowUs: number): FileCacheCounters {
    this.fold(nowUs);
    const reads = Math.floor(this.reads);
    const hits = Math.min(reads, Math.round(this.hits));
    const misses = reads - hits;
    const capacityPages = Math.floor(this.load.capacityBytes / PAGE_BYTES);
    return {
      misses,
      hits,
      used: Math.min(capacityPages, reads),
      writes: misses,
      hitRatio: reads === 0 ? null : Math.round((hits * 10_000) / reads) / 100,
    };
  }

  private fold(nowUs: number): void {
    const untilUs = this.stoppedUs === undefined ? nowUs : Math.min(nowUs, this.stoppedUs);
    if (untilUs <= this.foldedUs) return;
    const reads = (this.load.readsPerSecond * (untilUs - this.foldedUs)) / US_PER_SECOND;
    this.reads += reads;
    this.hits += (reads * this.load.hitRatio) / 100;
    this.foldedUs = untilUs;
  }
}
