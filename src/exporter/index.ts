/**
 * The exporter assembled: `start-exporter.ts` builds and starts every part from a validated
 * configuration (client and store from `backend.ts`, the daemon, metrics, sinks, the status
 * page and the HTTP server); `readiness.ts` says when it is ready; `reload.ts` applies SIGHUP
 * reloads one at a time; `process-settings.ts` holds the V8 flags and the environment that
 * keep the daemon's memory small, and `memory-saver.ts` switches V8's memory saver mode by how
 * busy the daemon is.
 * Commands only parse flags and call it.
 */
export * from "./start-exporter.js";
export { apiClientFor, storeBackendFrom } from "./backend.js";
export {
  DAEMON_ENVIRONMENT,
  DAEMON_NODE_FLAGS,
  DAEMON_V8_FLAGS,
  setDaemonV8Flags,
  v8FlagChosen,
  type V8FlagChoice,
} from "./process-settings.js";
export {
  SAVER_POLICY,
  SAVER_START,
  memorySaverSupported,
  nextSaverState,
  startMemorySaver,
  type MemorySaver,
  type SaverChoice,
  type SaverPolicy,
  type SaverState,
} from "./memory-saver.js";
export type { ConfigLoads, ReloadOutcome } from "./reload.js";
