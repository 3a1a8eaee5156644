/** What a benchmark process reports about itself: CPU time and memory. */
import { readFileSync } from "node:fs";

/** CPU time (user + system) spent by this process since `start`, in ms. */
export function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

export interface MemorySnapshot {
  /** Resident set size now, bytes. */
  readonly rss: number;
  /** Peak resident set size of the process so far, bytes (see `peakRss`). */
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
    peakRss: peakRss(),
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
  };
}

/**
 * The process's peak RSS: on Linux its own high-water mark (`VmHWM`), which starts afresh when
 * the process starts. `getrusage`'s maxrss does not: a forked child starts from the RSS of the
 * process that forked it, so a driver larger than the exporter would set the exporter's peak.
 * Elsewhere, maxrss.
 */
function peakRss(): number {
  try {
    const kib = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    if (kib !== undefined) return Number(kib) * 1024;
  } catch {
    // Not Linux: maxrss below.
  }
  return process.resourceUsage().maxRSS * 1024;
}
