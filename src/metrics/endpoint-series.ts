/**
 * Endpoint families, projected from each project's latest endpoint listing, and the start and
 * suspend counters from its committed totals. An endpoint missing from the latest listing was
 * deleted: none of its series remain.
 */
import {
  ENDPOINT_STATES,
  effectiveSuspendSeconds,
  maxConnectionsFor,
  type Endpoint,
} from "../contract/index.js";
import type { Totals } from "../store/index.js";
import type { Projections, Sample } from "./projected-family.js";
import { committed, type ProjectView } from "../sync/index.js";
import { formatValue } from "./text-format.js";

export const endpointProjections = {
  *pgcp_endpoint_info({ projects }) {
    for (const { project, endpoint: e } of listed(projects)) {
      const maxConnections = maxConnectionsFor(e.autoscaling_limit_min_cu);
      const labels = {
        project,
        branch: e.branch_id,
        endpoint: e.id,
        region_id: e.region_id,
        endpoint_type: e.type,
        host: e.host,
        min_compute_units: formatValue(e.autoscaling_limit_min_cu),
        max_compute_units: formatValue(e.autoscaling_limit_max_cu),
        max_connections: maxConnections === undefined ? "" : formatValue(maxConnections),
        auto_suspend_delay_seconds: formatValue(suspendDelaySeconds(e)),
      };
      yield { labels, value: 1 };
    }
  },

  *pgcp_endpoint_current_state({ projects }) {
    for (const { project, endpoint: e } of listed(projects)) {
      yield { labels: { project, endpoint: e.id, state: e.current_state }, value: 1 };
    }
  },

  *pgcp_endpoint_state({ projects }) {
    for (const { project, endpoint: e } of listed(projects)) {
      const states: readonly string[] = ENDPOINT_STATES;
      const all = states.includes(e.current_state) ? states : [...states, e.current_state];
      for (const state of all) {
        yield {
          labels: { project, endpoint: e.id, state },
          value: state === e.current_state ? 1 : 0,
        };
      }
    }
  },

  pgcp_endpoint_autoscaling_min_compute_units: ({ projects }) =>
    perEndpoint(projects, (e) => e.autoscaling_limit_min_cu),

  pgcp_endpoint_autoscaling_max_compute_units: ({ projects }) =>
    perEndpoint(projects, (e) => e.autoscaling_limit_max_cu),

  pgcp_endpoint_max_connections: ({ projects }) =>
    perEndpoint(projects, (e) => maxConnectionsFor(e.autoscaling_limit_min_cu)),

  pgcp_endpoint_auto_suspend_delay_seconds: ({ projects }) =>
    perEndpoint(projects, suspendDelaySeconds),

  pgcp_endpoint_auto_suspend_enabled: ({ projects }) =>
    perEndpoint(projects, (e) =>
      effectiveSuspendSeconds(e.suspend_timeout_seconds) === null ? 0 : 1,
    ),

  pgcp_endpoint_last_active_timestamp_seconds: ({ projects }) =>
    perEndpoint(projects, (e) =>
      e.last_active === undefined ? undefined : Date.parse(e.last_active) / 1000,
    ),

  pgcp_endpoint_starts_total: ({ projects }) => endpointCounter(projects, (t) => t.endpointStarts),

  pgcp_endpoint_suspends_total: ({ projects }) =>
    endpointCounter(projects, (t) => t.endpointSuspends),

  pgcp_project_endpoint_starts_total: ({ projects }) =>
    projectCounter(projects, (t) => t.endpointStarts),

  pgcp_project_endpoint_suspends_total: ({ projects }) =>
    projectCounter(projects, (t) => t.endpointSuspends),

  pgcp_project_autoscaling_min_compute_units: ({ projects }) =>
    perProject(projects, (e) => e.autoscaling_limit_min_cu),

  pgcp_project_autoscaling_max_compute_units: ({ projects }) =>
    perProject(projects, (e) => e.autoscaling_limit_max_cu),
} satisfies Partial<Projections>;

/** "Never" is +Inf: the exact meaning, and comparisons such as `> 3600` still hold for it. */
function suspendDelaySeconds(e: Endpoint): number {
  return effectiveSuspendSeconds(e.suspend_timeout_seconds) ?? Infinity;
}

function* listed(
  projects: Iterable<ProjectView>,
): Iterable<{ project: string; endpoint: Endpoint }> {
  for (const view of projects) {
    for (const endpoint of view.endpoints ?? []) yield { project: view.projectId, endpoint };
  }
}

/** One sample per listed endpoint; `value` returning undefined leaves the endpoint out. */
function* perEndpoint(
  projects: Iterable<ProjectView>,
  value: (endpoint: Endpoint) => number | undefined,
): Iterable<Sample> {
  for (const { project, endpoint } of listed(projects)) {
    const v = value(endpoint);
    if (v !== undefined) yield { labels: { project, endpoint: endpoint.id }, value: v };
  }
}

/** One sample per project whose endpoints are listed: `value` summed over its endpoints. */
function* perProject(
  projects: Iterable<ProjectView>,
  value: (endpoint: Endpoint) => number,
): Iterable<Sample> {
  for (const { projectId, endpoints } of projects) {
    if (endpoints === undefined) continue;
    const sum = endpoints.reduce((total, e) => total + value(e), 0);
    yield { labels: { project: projectId }, value: sum };
  }
}

/**
 * A per-project counter from the committed totals: every endpoint they count, listed or not
 * (deleted), so that the sum never goes down.
 */
function* projectCounter(
  projects: Iterable<ProjectView>,
  pick: (totals: Totals) => Record<string, number>,
): Iterable<Sample> {
  for (const { projectId, state } of committed(projects)) {
    const sum = Object.values(pick(state.totals)).reduce((total, n) => total + n, 0);
    yield { labels: { project: projectId }, value: sum };
  }
}

/**
 * A per-endpoint counter from the committed totals. Once the project's endpoints are listed,
 * the listing decides which endpoints have series (a listed endpoint that never started shows
 * 0, so that the first start is an increase); before that, every endpoint in the totals does.
 */
function* endpointCounter(
  projects: Iterable<ProjectView>,
  pick: (totals: Totals) => Record<string, number>,
): Iterable<Sample> {
  for (const view of projects) {
    const counts = new Map(Object.entries(view.state === undefined ? {} : pick(view.state.totals)));
    const ids = view.endpoints?.map((e) => e.id) ?? counts.keys();
    for (const endpoint of ids) {
      yield { labels: { project: view.projectId, endpoint }, value: counts.get(endpoint) ?? 0 };
    }
  }
}
