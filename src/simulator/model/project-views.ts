import type { Endpoint, Operation, ProjectListItem } from "../../contract/index.js";
import { microsToDate, toIsoSeconds, US_PER_MS } from "../time.js";
import type { BranchState, ProjectState } from "./state.js";

/**
 * How projects and branches look on the wire. The seed shows no project or branch fields; the
 * real schemas require these, filled with plausible constants where the simulator has no such
 * concept (usage counters are 0).
 */

/** A `GET /projects` entry with every field the real API's `ProjectListItem` requires. */
export interface ProjectListItemView extends ProjectListItem {
  readonly platform_id: string;
  readonly region_id: string;
  readonly provisioner: string;
  readonly pg_version: number;
  readonly proxy_host: string;
  readonly branch_logical_size_limit: number;
  readonly branch_logical_size_limit_bytes: number;
  readonly store_passwords: boolean;
  readonly active_time: number;
  readonly cpu_used_sec: number;
  readonly creation_source: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly owner_id: string;
  /** Present when the project belongs to an organisation. */
  readonly org_id?: string;
}

export function projectListItemView(project: ProjectState): ProjectListItemView {
  const created = toIsoSeconds(project.createdUs);
  // Free-plan branches are capped at 512 MiB of logical size; paid ones at 200 GiB.
  const sizeLimitMib = project.plan === "free" ? 512 : 204_800;
  return {
    id: project.id,
    platform_id: project.region.platformId,
    region_id: project.region.id,
    name: project.name,
    provisioner: "k8s-neonvm",
    pg_version: project.pgVersion,
    proxy_host: project.region.proxyHost,
    branch_logical_size_limit: sizeLimitMib,
    branch_logical_size_limit_bytes: sizeLimitMib * 1024 * 1024,
    store_passwords: true,
    active_time: 0,
    cpu_used_sec: 0,
    creation_source: "console",
    created_at: created,
    updated_at: created,
    owner_id: project.ownerId,
    ...(project.orgId === undefined ? {} : { org_id: project.orgId }),
  };
}

/** `GET /organizations/{org_id}`: the real `Organization`. */
export interface OrganizationView {
  readonly id: string;
  readonly name: string;
  readonly handle: string;
  readonly plan: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly managed_by: string;
}

export function organizationView(
  org: { readonly id: string; readonly name: string },
  createdUs: number,
): OrganizationView {
  const created = toIsoSeconds(createdUs);
  const handle = `${org.name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${org.id}`;
  return {
    id: org.id,
    name: org.name,
    handle,
    plan: "scale",
    created_at: created,
    updated_at: created,
    managed_by: "console",
  };
}

/** The real API's default history retention (one day), in seconds. */
const HISTORY_RETENTION_SECONDS = 86_400;

/** `GET /projects/{project_id}` and friends: the real `Project` (a superset of the list entry). */
export type ProjectView = Omit<ProjectListItemView, "active_time"> & {
  readonly history_retention_seconds: number;
  readonly consumption_period_start: string;
  readonly consumption_period_end: string;
  readonly active_time_seconds: number;
  readonly compute_time_seconds: number;
  readonly written_data_bytes: number;
  readonly data_transfer_bytes: number;
  readonly data_storage_bytes_hour: number;
};

export function projectView(project: ProjectState, nowUs: number): ProjectView {
  const { active_time: _listOnly, ...item } = projectListItemView(project);
  return {
    ...item,
    history_retention_seconds: HISTORY_RETENTION_SECONDS,
    // The consumption period is the current calendar month (UTC).
    ...consumptionPeriod(nowUs),
    active_time_seconds: 0,
    compute_time_seconds: 0,
    written_data_bytes: 0,
    data_transfer_bytes: 0,
    data_storage_bytes_hour: 0,
  };
}

function consumptionPeriod(nowUs: number): {
  consumption_period_start: string;
  consumption_period_end: string;
} {
  const now = microsToDate(nowUs);
  const monthStart = (offset: number): string =>
    toIsoSeconds(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1) * US_PER_MS);
  return { consumption_period_start: monthStart(0), consumption_period_end: monthStart(1) };
}

/** A branch as the real `Branch` schema requires it. */
export interface BranchView {
  readonly id: string;
  readonly project_id: string;
  readonly parent_id?: string;
  readonly name: string;
  readonly current_state: string;
  readonly state_changed_at: string;
  readonly creation_source: string;
  readonly primary: boolean;
  readonly default: boolean;
  readonly protected: boolean;
  readonly cpu_used_sec: number;
  readonly compute_time_seconds: number;
  readonly active_time_seconds: number;
  readonly written_data_bytes: number;
  readonly data_transfer_bytes: number;
  readonly created_at: string;
  readonly updated_at: string;
}

export function branchView(project: ProjectState, branch: BranchState): BranchView {
  return {
    id: branch.id,
    project_id: project.id,
    ...(branch.parent === undefined ? {} : { parent_id: branch.parent.id }),
    name: branch.name,
    current_state: branch.state,
    state_changed_at: toIsoSeconds(branch.stateChangedUs),
    creation_source: "console",
    primary: branch.primary,
    default: branch.primary,
    protected: false,
    cpu_used_sec: 0,
    compute_time_seconds: 0,
    active_time_seconds: 0,
    written_data_bytes: 0,
    data_transfer_bytes: 0,
    created_at: toIsoSeconds(branch.createdUs),
    updated_at: toIsoSeconds(branch.updatedUs),
  };
}

/** What the creation of a project or a branch answers besides the resource itself. */
export interface CreatedResources {
  readonly endpoints: readonly Endpoint[];
  readonly operations: readonly Operation[];
  readonly roles: readonly RoleView[];
  readonly databases: readonly DatabaseView[];
}

export interface RoleView {
  readonly branch_id: string;
  readonly name: string;
  readonly protected: boolean;
  readonly created_at: string;
  readonly updated_at: string;
}

export interface DatabaseView {
  readonly id: number;
  readonly branch_id: string;
  readonly name: string;
  readonly owner_name: string;
  readonly created_at: string;
  readonly updated_at: string;
}
