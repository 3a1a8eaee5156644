import type { EndpointOperationsResponse, Operation } from "../contract/index.js";
import type { ClockMode } from "./clock.js";
import type { ExtensionMode } from "./computes/modes.js";
import type { Fault } from "./http/faults.js";
import type { StatsView } from "./http/stats.js";
import type { PlanName } from "./model/state.js";
import type { TruthOperation } from "./model/views.js";

/** Response bodies of the `/_sim` control interface (see README.md for each call). */

/** `POST /_sim/projects` → 201 */
export interface SimProjectResponse {
  readonly project: {
    readonly id: string;
    readonly plan: PlanName;
    readonly owner_id: string;
    /** Present when the project belongs to an organisation. */
    readonly org_id?: string;
    /** The project's region (its endpoints are there too). */
    readonly region_id: string;
  };
  readonly branches: readonly { readonly id: string; readonly primary: boolean }[];
  /** The primary branch's read-write endpoint (`POST /_sim/endpoints/{id}/connect` wakes it). */
  readonly endpoints: readonly { readonly id: string; readonly branch_id: string }[];
}

/** `GET /_sim/clock` → 200 */
export interface SimClockResponse {
  readonly now: string;
  readonly mode: ClockMode;
}

/** `POST /_sim/clock/advance` → 200 */
export interface SimAdvanceResponse {
  readonly now: string;
}

/** `POST /_sim/endpoints/{endpoint_id}/connect` → 200 */
export type SimConnectResponse = EndpointOperationsResponse;

/** `POST /_sim/operations` → 201 */
export interface SimOperationResponse {
  readonly operation: Operation;
}

/** `POST /_sim/faults` → 201 */
export interface SimFaultResponse {
  readonly fault: Fault;
}

/** `GET /_sim/faults` → 200 */
export interface SimFaultsResponse {
  readonly faults: readonly Fault[];
}

/** `DELETE /_sim/faults` → 200 */
export interface SimClearFaultsResponse {
  readonly cleared: number;
}

/** `GET /_sim/truth?project_id=` → 200 */
export interface SimTruthResponse {
  readonly operations: readonly TruthOperation[];
}

/** `GET /_sim/stats` and `DELETE /_sim/stats` → 200 */
export type SimStatsResponse = StatsView;

/** `GET /_sim/traffic`: the projects the traffic keeps busy, most active first. */
export interface SimTrafficResponse {
  readonly projects: readonly string[];
}

/** `POST /_sim/bulk` → 201 */
export interface SimBulkResponse {
  readonly project_ids: readonly string[];
  readonly operations: number;
}

/** An organisation as `/_sim` shows it. */
export interface SimOrganization {
  readonly id: string;
  readonly name: string;
  readonly members: readonly string[];
}

/** `POST /_sim/organizations` → 201, `POST /_sim/organizations/{org_id}/members` → 200 */
export interface SimOrganizationResponse {
  readonly organization: SimOrganization;
}

/** `GET /_sim/organizations` → 200 */
export interface SimOrganizationsResponse {
  readonly organizations: readonly SimOrganization[];
}

/** `POST /_sim/api-keys` → 201: whose key it is (the key itself is not echoed). */
export interface SimApiKeyResponse {
  readonly api_key: { readonly user: string } | { readonly org: string };
}

/**
 * `GET` and `POST /_sim/endpoints/{endpoint_id}/compute` → 200: an endpoint's compute on the
 * PostgreSQL server the simulator hosts computes on (see README.md, Computes).
 */
export interface SimComputeView {
  readonly endpoint_id: string;
  /** The loopback address clients connect to (the endpoint's `host`). */
  readonly host: string;
  /** The port every endpoint's address listens on. */
  readonly port: number;
  readonly current_state: string;
  /** What `neon_stat_file_cache` is for the endpoint's sessions. */
  readonly extension: ExtensionMode;
  /** Whether the endpoint's statements on the simulated objects hang. */
  readonly hang: boolean;
  /** The ratio (percent) the compute runs at: as set, or modelled from the working set. */
  readonly hit_ratio: number;
  /** True when a test set the ratio outright. */
  readonly hit_ratio_set: boolean;
  readonly working_set_bytes: number;
  /** The file cache of the compute's (minimum) size, seed 2.5's table. */
  readonly file_cache_bytes: number;
  /** Page reads per second that reach the cache while the compute runs. */
  readonly reads_per_second: number;
  /** The compute's last start (simulated time); absent before its first. */
  readonly started_at?: string;
  /** What the view shows now (since the last start). */
  readonly file_cache: {
    readonly file_cache_misses: number;
    readonly file_cache_hits: number;
    readonly file_cache_used: number;
    readonly file_cache_writes: number;
    readonly file_cache_hit_ratio: number | null;
  };
  /** Client sessions forwarded to the server now. */
  readonly sessions: number;
}

/** `GET`/`POST /_sim/endpoints/{endpoint_id}/compute` → 200 */
export interface SimComputeResponse {
  readonly compute: SimComputeView;
}
