/**
 * The simulator's computes backed by a real PostgreSQL server: a loopback listener per
 * endpoint that forwards clients' sessions to the server (waking an idle compute first), the
 * activity that holds off auto-suspend, and the `neon_stat_file_cache` view. See README.md,
 * Computes. The host (`host.ts`) follows the endpoints and answers `/_sim`; what it keeps is in
 * `host-state.ts`, its listeners in `listeners.ts`, the proxied sessions in `sessions.ts`, and
 * its side on the server, with the look every 200 ms, in `catalog-sync.ts`.
 */
export { ComputeHost } from "./host.js";
export type { ComputeHostDeps } from "./host-state.js";
export {
  DEFAULT_COMPUTE_DATABASE,
  SIMULATOR_APPLICATION_NAME,
  type ComputeHostOptions,
} from "./options.js";
export { EXTENSION_MODES, OTHER_FILE_CACHE_COLUMNS, type ExtensionMode } from "./modes.js";
export {
  DEFAULT_WORKING_SET_BYTES,
  FITTING_HIT_RATIO,
  PAGE_BYTES,
  READS_PER_CU_SECOND,
  fileCacheBytes,
  modelHitRatio,
} from "./file-cache.js";
