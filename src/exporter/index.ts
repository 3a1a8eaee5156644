/**
 * The exporter assembled: `start-exporter.ts` builds and starts every part from a validated
 * configuration (client and store from `backend.ts`, the daemon, metrics, sinks, the status
 * page and the HTTP server); `readiness.ts` says when it is ready; `reload.ts` applies SIGHUP
 * reloads one at a time; `heap-growth.ts` keeps the daemon's heap near what it uses. Commands
 * only parse flags and call it.
 */
export * from "./start-exporter.js";
export { apiClientFor, storeBackendFrom } from "./backend.js";
export { HEAP_GROWING_PERCENT, heapGrowthChosen, limitHeapGrowth } from "./heap-growth.js";
export type { ConfigLoads, ReloadOutcome } from "./reload.js";
