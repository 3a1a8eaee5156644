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
} from "../../contract/index.js";
import type { Totals } from "../../store/index.js";
import type { ProjectView } from "../../sync/index.js";
import type { Family } from "./family.js";
import type { PerProject } from "./projection.js";
import { formatValue, type Sample } from "./series.js";

export const ENDPOINT_FAMILIES = [
  {
    name: "pgcp_endpoint_info",
    type: "gauge",
    labels: [
      "project",
      "branch",
      "endpoint",
      "region_id",
      "endpoint_type",
      "host",
      "min_compute_units",
      "max_compute_units",
      "max_connections",
      "auto_suspend_delay_seconds",
    ],
    help: "Properties of an endpoint, its autoscaling limits, max_connections (empty outside the size table) and auto-suspend delay (+Inf: never) included; always 1.",
    unit: "",
    group: "endpoints",
    source: "listing",
    level: "standard",
    value: {
      reads: [listing],
      *series({ projectId: project, endpoints }) {
        for (const e of endpoints ?? []) {
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
    },
  },
  {
    name: "pgcp_endpoint_state",
    type: "gauge",
    labels: ["project", "endpoint", "state"],
    help: "Endpoint state as a state set: 1 for the current state, 0 for the others (init, active, idle); an unknown state gets a series of its own.",
    unit: "",
    group: "endpoints",
    source: "listing",
    level: "full",
    value: {
      reads: [listing],
      *series({ projectId: project, endpoints }) {
        for (const e of endpoints ?? []) {
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
    },
  },
  {
    name: "pgcp_endpoint_current_state",
    type: "gauge",
    labels: ["project", "endpoint", "state"],
    help: "Endpoint state as one series, labelled with the current state (init, active, idle, or any other the API reports); always 1.",
    unit: "",
    group: "endpoints",
    source: "listing",
    level: "standard",
    value: {
      reads: [listing],
      *series({ projectId: project, endpoints }) {
        for (const e of endpoints ?? []) {
          yield { labels: { project, endpoint: e.id, state: e.current_state }, value: 1 };
        }
      },
    },
  },
  {
    name: "pgcp_endpoint_autoscaling_min_compute_units",
    type: "gauge",
    labels: ["project", "endpoint"],
    help: "Minimum autoscaling size in compute units (1 CU = 1 vCPU and 4 GB RAM).",
    unit: "compute_units",
    group: "endpoints",
    source: "listing",
    level: "full",
    value: perEndpoint((e) => e.autoscaling_limit_min_cu),
  },
  {
    name: "pgcp_endpoint_autoscaling_max_compute_units",
    type: "gauge",
    labels: ["project", "endpoint"],
    help: "Maximum autoscaling size in compute units.",
    unit: "compute_units",
    group: "endpoints",
    source: "listing",
    level: "full",
    value: perEndpoint((e) => e.autoscaling_limit_max_cu),
  },
  {
    name: "pgcp_endpoint_max_connections",
    type: "gauge",
    labels: ["project", "endpoint"],
    help: "Postgres max_connections that follows from the minimum size (absent for a size outside the size table); it does not grow when the compute scales up.",
    unit: "",
    group: "endpoints",
    source: "listing",
    level: "standard",
    value: perEndpoint((e) => maxConnectionsFor(e.autoscaling_limit_min_cu)),
  },
  {
    name: "pgcp_endpoint_auto_suspend_delay_seconds",
    type: "gauge",
    labels: ["project", "endpoint"],
    help: "Idle time after which the endpoint is suspended (suspend_timeout_seconds, 0 meaning the default 300); +Inf when auto-suspend is off.",
    unit: "seconds",
    group: "endpoints",
    source: "listing",
    level: "full",
    value: perEndpoint(suspendDelaySeconds),
  },
  {
    name: "pgcp_endpoint_auto_suspend_enabled",
    type: "gauge",
    labels: ["project", "endpoint"],
    help: "1 when the endpoint suspends itself when idle, 0 when auto-suspend is off (suspend_timeout_seconds -1).",
    unit: "",
    group: "endpoints",
    source: "listing",
    level: "full",
    value: perEndpoint((e) =>
      effectiveSuspendSeconds(e.suspend_timeout_seconds) === null ? 0 : 1,
    ),
  },
  {
    name: "pgcp_endpoint_last_active_timestamp_seconds",
    type: "gauge",
    labels: ["project", "endpoint"],
    help: "Last time the endpoint was active, as the API reports it (absent when it does not).",
    unit: "seconds",
    group: "endpoints",
    source: "listing",
    level: "full",
    value: perEndpoint((e) =>
      e.last_active === undefined ? undefined : Date.parse(e.last_active) / 1000,
    ),
  },
  {
    name: "pgcp_endpoint_starts_total",
    type: "counter",
    labels: ["project", "endpoint"],
    help: "Finished start_compute operations of the endpoint; once the project's endpoints have been listed, only for listed endpoints.",
    unit: "",
    group: "endpoints",
    source: "state",
    level: "full",
    value: endpointCounter((t) => t.endpointStarts),
  },
  {
    name: "pgcp_endpoint_suspends_total",
    type: "counter",
    labels: ["project", "endpoint"],
    help: "Finished suspend_compute operations of the endpoint; once the project's endpoints have been listed, only for listed endpoints.",
    unit: "",
    group: "endpoints",
    source: "state",
    level: "full",
    value: endpointCounter((t) => t.endpointSuspends),
  },
  {
    name: "pgcp_project_endpoint_starts_total",
    type: "counter",
    labels: ["project"],
    help: "pgcp_endpoint_starts_total summed over the project's endpoints, deleted ones included.",
    unit: "",
    group: "endpoints",
    source: "state",
    level: "standard",
    value: projectCounter((t) => t.endpointStarts),
  },
  {
    name: "pgcp_project_endpoint_suspends_total",
    type: "counter",
    labels: ["project"],
    help: "pgcp_endpoint_suspends_total summed over the project's endpoints, deleted ones included.",
    unit: "",
    group: "endpoints",
    source: "state",
    level: "standard",
    value: projectCounter((t) => t.endpointSuspends),
  },
  {
    name: "pgcp_project_autoscaling_min_compute_units",
    type: "gauge",
    labels: ["project"],
    help: "Minimum autoscaling sizes of the project's listed endpoints, summed, in compute units.",
    unit: "compute_units",
    group: "endpoints",
    source: "listing",
    level: "standard",
    value: perProject((e) => e.autoscaling_limit_min_cu),
  },
  {
    name: "pgcp_project_autoscaling_max_compute_units",
    type: "gauge",
    labels: ["project"],
    help: "Maximum autoscaling sizes of the project's listed endpoints, summed, in compute units.",
    unit: "compute_units",
    group: "endpoints",
    source: "listing",
    level: "standard",
    value: perProject((e) => e.autoscaling_limit_max_cu),
  },
] as const satisfies readonly Family[];

/** "Never" is +Inf: the exact meaning, and comparisons such as `> 3600` still hold for it. */
function suspendDelaySeconds(e: Endpoint): number {
  return effectiveSuspendSeconds(e.suspend_timeout_seconds) ?? Infinity;
}

/** The project's latest listing: what every per-endpoint family reads. */
function listing(view: ProjectView): readonly Endpoint[] | undefined {
  return view.endpoints;
}

/** One sample per listed endpoint; `value` returning undefined leaves the endpoint out. */
function perEndpoint(value: (endpoint: Endpoint) => number | undefined): PerProject<Sample> {
  return {
    reads: [listing],
    *series({ projectId: project, endpoints }) {
      for (const endpoint of endpoints ?? []) {
        const v = value(endpoint);
        if (v !== undefined) yield { labels: { project, endpoint: endpoint.id }, value: v };
      }
    },
  };
}

/** One sample per project whose endpoints are listed: `value` summed over its endpoints. */
function perProject(value: (endpoint: Endpoint) => number): PerProject<Sample> {
  return {
    *series({ projectId, endpoints }) {
      if (endpoints === undefined) return;
      const sum = endpoints.reduce((total, e) => total + value(e), 0);
      yield { labels: { project: projectId }, value: sum };
    },
  };
}

/** What `pick` picks from the project's committed totals, if it has a committed state. */
function committedTotal(
  pick: (totals: Totals) => Record<string, number>,
): (view: ProjectView) => Record<string, number> | undefined {
  return ({ state }) => (state === undefined ? undefined : pick(state.totals));
}

/**
 * A per-project counter from the committed totals: every endpoint they count, listed or not
 * (deleted), so that the sum never goes down.
 */
function projectCounter(pick: (totals: Totals) => Record<string, number>): PerProject<Sample> {
  const counts = committedTotal(pick);
  return {
    *series(view) {
      const byEndpoint = counts(view);
      if (byEndpoint === undefined) return;
      const sum = Object.values(byEndpoint).reduce((total, n) => total + n, 0);
      yield { labels: { project: view.projectId }, value: sum };
    },
  };
}

/**
 * A per-endpoint counter from the committed totals. Once the project's endpoints are listed,
 * the listing decides which endpoints have series (a listed endpoint that never started shows
 * 0, so that the first start is an increase); before that, every endpoint in the totals does.
 */
function endpointCounter(pick: (totals: Totals) => Record<string, number>): PerProject<Sample> {
  const counts = committedTotal(pick);
  return {
    reads: [listing, counts],
    *series(view) {
      const byEndpoint = new Map(Object.entries(counts(view) ?? {}));
      const ids = view.endpoints?.map((e) => e.id) ?? byEndpoint.keys();
      for (const endpoint of ids) {
        yield {
          labels: { project: view.projectId, endpoint },
          value: byEndpoint.get(endpoint) ?? 0,
        };
      }
    },
  };
}
