/**
 * The compute probe, off unless `computes.enabled` is set: it reads the file cache and the
 * connections of active computes, never waking one and never keeping one awake.
 * `rule.ts` is the pure rule of when a compute may be read (only while the latest listing says
 * it is active; again only while others use it; a failure retried only on a newer listing);
 * `advice.ts` the pure rule of when a larger compute is advised; `reading.ts` one probe (one
 * connection, two statements, its failure's reason); `monitor.ts` the loop that applies them to
 * every listed endpoint and reports through the daemon's observers; `settings.ts` its settings
 * from the configuration. What it reports is kept in the project views (`sync/compute-views.ts`).
 */
export {
  ComputeMonitor,
  factsOf,
  othersActiveAt,
  type MonitorInputs,
  type MonitorSettings,
} from "./monitor.js";
export { monitorSettings } from "./settings.js";
export * from "./rule.js";
export * from "./advice.js";
export {
  FILE_CACHE_COLUMNS,
  FILE_CACHE_VIEW,
  PROBE_APPLICATION_NAME,
  parseSessions,
  parseView,
  probeCompute,
  type ProbeFailed,
  type ProbeOptions,
  type ProbeResult,
  type ProbeTarget,
  type RawReading,
  type SessionsReading,
} from "./reading.js";
