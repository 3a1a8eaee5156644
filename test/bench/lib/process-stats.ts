/** What a benchmark process reports about itself: CPU time and memory. */

/** CPU time (user + system) spent by this process since `start`, in ms. */
export function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

export interface MemorySnapshot {
  /** Resident set size now, bytes. */
  readonly rss: number;
  /** Peak resident set size of the process so far, bytes (`getrusage` maxrss). */
  readonly peakRss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  /** Memory of C++ objects bound to JS ones, and of ArrayBuffers (Buffers), bytes. */
  readonly external: number;
  readonly arrayBuffers: number;
}

export function memorySnapshot(): MemorySnapshot {
  const m = process.memoryUsage();
  return {
    rss: m.rss,
    peakRss: process.resourceUsage().maxRSS * 1024,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
  };
}
