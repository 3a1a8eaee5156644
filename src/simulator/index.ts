/**
 * The control-plane simulator: the API of `seed/control-plane-api.md` over real HTTP, with
 * personal accounts and organisations and their keys, a controllable clock, seeded ids, fault
 * injection and generated traffic. See README.md.
 */
export { startSimulator, type RunningSimulator } from "./simulator.js";
export {
  DEFAULT_MANUAL_START,
  DEFAULT_AVAILABILITY_CHECK_SECONDS,
  type ApiKeyOptions,
  type OrganizationOptions,
  type SimulatorOptions,
} from "./options.js";
export type { ClockMode } from "./clock.js";
export { MAX_HISTORY_SECONDS, type TrafficOptions } from "./traffic/options.js";
export {
  DEFAULT_COMPUTE_DATABASE,
  SIMULATOR_APPLICATION_NAME,
  type ComputeHostOptions,
} from "./computes/options.js";
export { EXTENSION_MODES, OTHER_FILE_CACHE_COLUMNS, type ExtensionMode } from "./computes/modes.js";
export { zipfExponentFor } from "./traffic/zipf.js";
export { REAL_API_RATE_LIMIT, type RateLimitOptions } from "./http/rate-limiter.js";
export { API_ROUTE_NAMES, UNKNOWN_ROUTE, type ApiRouteName } from "./http/api-routes.js";
export { SIM_BASE_PATH } from "./http/server.js";
export {
  FAILURE_PLACEHOLDERS,
  FAULT_KIND_ROUTES,
  FAULT_KINDS,
  type Fault,
  type FaultKind,
  type FaultSpec,
} from "./http/faults.js";
export type { StatsView } from "./http/stats.js";
export type {
  SimBulkRequest,
  SimComputeRequest,
  SimCreateApiKeyRequest,
  SimCreateOrganizationRequest,
  SimCreateProjectRequest,
  SimFaultRequest,
  SimScriptOperationRequest,
} from "./http/sim-schemas.js";
export type { ControlPlane } from "./model/control-plane.js";
export { DEFAULT_USER_ID, type KeyOwner, type Organization } from "./model/accounts.js";
export type { BulkSeedOptions, BulkSeedResult } from "./model/bulk-seed.js";
export { DEFAULT_REGION_ID, REGION_IDS } from "./model/regions.js";
export type { HistoryView, TruthOperation } from "./model/views.js";
export { NORMAL_DURATION_SECONDS } from "./model/plans.js";
export type * from "./sim-api.js";
