import type { Endpoint, Operation } from "../../contract/index.js";
import { toIsoMicros, toIsoSeconds, US_PER_MS } from "../time.js";
import type { EndpointLifecycle } from "./endpoint-lifecycle.js";
import type { EndpointState, ProjectState } from "./state.js";

/**
 * How records look on the wire. Everything is stored as numbers and indices and formatted
 * here, on output. Fields required by the real API's schema but absent from the seed
 * (`total_duration_ms`, `creation_source`, `provisioner`, …) are always present.
 */

/**
 * An operation record. `projectId` replaces the record's project id (the `foreign_project`
 * fault: a server that files records under the wrong project).
 */
export function operationView(
  project: ProjectState,
  index: number,
  projectId: string = project.id,
): Operation {
  const log = project.log;
  const endpointIndex = log.endpoint(index);
  const endpoint = endpointIndex === undefined ? undefined : project.endpoints[endpointIndex];
  const createdUs = log.createdAt(index);
  const updatedUs = log.updatedAt(index);
  const retryAtUs = log.retryAt(index);
  const error = log.error(index);
  return {
    id: log.id(index),
    project_id: projectId,
    branch_id: project.branches[log.branch(index)]?.id ?? "",
    ...(endpoint === undefined ? {} : { endpoint_id: endpoint.id }),
    action: log.action(index),
    status: log.status(index),
    failures_count: log.failuresCount(index),
    // A misdated record shows a creation time other than its real one (its place in the log).
    created_at: toIsoSeconds(log.shownCreatedAt(index)),
    updated_at: toIsoSeconds(updatedUs),
    // Elapsed from creation to the last status change. Rounded, so that the microsecond by
    // which a record created in a crowded instant was moved does not show as 999 ms. From the
    // real creation time, also on a misdated record.
    total_duration_ms: Math.round((updatedUs - createdUs) / US_PER_MS),
    ...(error === undefined ? {} : { error }),
    ...(retryAtUs === undefined ? {} : { retry_at: toIsoSeconds(retryAtUs) }),
  };
}

export interface HistoryView {
  readonly status: string;
  /** Microsecond precision: the exact instant, so that arrivals in one second stay ordered. */
  readonly at: string;
  readonly failures_count: number;
}

export type TruthOperation = Operation & { readonly history: readonly HistoryView[] };

/** Every operation of the project with its full status history, newest first. */
export function truthView(project: ProjectState): TruthOperation[] {
  const histories = project.log.histories();
  const result: TruthOperation[] = [];
  for (let i = project.log.size - 1; i >= 0; i--) {
    result.push({
      ...operationView(project, i),
      history: (histories[i] ?? []).map((h) => ({
        status: h.status,
        at: toIsoMicros(h.atUs),
        failures_count: h.failuresCount,
      })),
    });
  }
  return result;
}

export function endpointView(endpoint: EndpointState, lifecycle: EndpointLifecycle): Endpoint {
  const pending = lifecycle.pendingState(endpoint);
  const optionalTime = (field: string, us: number | undefined): Record<string, string> =>
    us === undefined ? {} : { [field]: toIsoSeconds(us) };
  // An endpoint is in its project's region.
  const region = endpoint.project.region;
  return {
    host: endpoint.host ?? `${endpoint.id}.${region.proxyHost}`,
    id: endpoint.id,
    project_id: endpoint.project.id,
    branch_id: endpoint.branch.id,
    region_id: region.id,
    type: endpoint.type,
    autoscaling_limit_min_cu: endpoint.minCu,
    autoscaling_limit_max_cu: endpoint.maxCu,
    current_state: endpoint.currentState,
    ...(pending === undefined ? {} : { pending_state: pending }),
    settings: { pg_settings: { ...endpoint.settings.pgSettings } },
    pooler_enabled: endpoint.settings.poolerEnabled,
    pooler_mode: endpoint.settings.poolerMode,
    disabled: endpoint.settings.disabled,
    passwordless_access: endpoint.settings.passwordlessAccess,
    ...(endpoint.settings.name === undefined ? {} : { name: endpoint.settings.name }),
    ...optionalTime("last_active", endpoint.lastActiveUs),
    creation_source: "console",
    created_at: toIsoSeconds(endpoint.createdUs),
    updated_at: toIsoSeconds(endpoint.updatedUs),
    ...optionalTime("started_at", endpoint.startedAtUs),
    ...optionalTime("suspended_at", endpoint.suspendedAtUs),
    proxy_host: region.proxyHost,
    suspend_timeout_seconds: endpoint.suspendTimeoutSeconds,
    provisioner: endpoint.settings.provisioner,
  };
}
