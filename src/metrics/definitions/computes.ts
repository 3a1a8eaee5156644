/**
 * Compute families: what the opt-in compute probe read of each active compute (its file cache,
 * its connections, the advice), projected from the project views, and the probe's own health.
 * An endpoint the probe knows nothing of has no series; a reading belongs to the compute's
 * current start, and goes when the endpoint is no longer active.
 */
import {
  ADVICE_REASONS,
  type ComputeReading,
  type ComputeView,
  type ProjectView,
} from "../../sync/index.js";
import type { Family } from "./family.js";
import type { PerProject } from "./projection.js";
import type { Sample } from "./series.js";

export const COMPUTE_FAMILIES = [
  {
    name: "pgcp_endpoint_file_cache_hit_ratio",
    type: "gauge",
    labels: ["project", "endpoint"],
    help: "The compute's file cache hit ratio since it started, in percent (0 to 100), as its file cache view gives it (absent before the cache has been read from).",
    unit: "",
    group: "computes",
    source: "probe",
    level: "standard",
    value: perReading((r) => r.hitRatio),
  },
  {
    name: "pgcp_endpoint_connections",
    type: "gauge",
    labels: ["project", "endpoint"],
    help: "Client sessions of the compute at its latest reading, other than the probe's own and those of the ignored roles and application names; compare with pgcp_endpoint_max_connections.",
    unit: "",
    group: "computes",
    source: "probe",
    level: "standard",
    value: perReading((r) => r.connections),
  },
  {
    name: "pgcp_endpoint_larger_compute_advised",
    type: "gauge",
    labels: ["project", "endpoint", "reason"],
    help: "1 when a larger compute is advised, by reason: file_cache (the hit ratio stayed below computes.advice.hitRatio for computes.advice.window after the warm-up) or connections (the connections stayed at or above computes.advice.connections of max_connections as long); else 0.",
    unit: "",
    group: "computes",
    source: "probe",
    level: "standard",
    value: {
      reads: [computes],
      *series({ projectId: project, computes: all }) {
        for (const c of all?.values() ?? []) {
          if (c.reading === undefined) continue;
          for (const reason of ADVICE_REASONS) {
            yield {
              labels: { project, endpoint: c.endpointId, reason },
              value: c.advised.includes(reason) ? 1 : 0,
            };
          }
        }
      },
    },
  },
  {
    name: "pgcp_endpoint_file_cache_hits_total",
    type: "counter",
    labels: ["project", "endpoint"],
    help: "file_cache_hits of the compute's file cache view: reads served by the cache since the compute started (a restart resets it).",
    unit: "",
    group: "computes",
    source: "probe",
    level: "full",
    value: perReading((r) => r.hits),
  },
  {
    name: "pgcp_endpoint_file_cache_misses_total",
    type: "counter",
    labels: ["project", "endpoint"],
    help: "file_cache_misses of the compute's file cache view: reads the cache did not hold since the compute started (a restart resets it).",
    unit: "",
    group: "computes",
    source: "probe",
    level: "full",
    value: perReading((r) => r.misses),
  },
  {
    name: "pgcp_endpoint_file_cache_writes_total",
    type: "counter",
    labels: ["project", "endpoint"],
    help: "file_cache_writes of the compute's file cache view since the compute started (a restart resets it).",
    unit: "",
    group: "computes",
    source: "probe",
    level: "full",
    value: perReading((r) => r.writes),
  },
  {
    name: "pgcp_endpoint_file_cache_used",
    type: "gauge",
    labels: ["project", "endpoint"],
    help: "file_cache_used of the compute's file cache view: how much of the cache is in use, in the view's units.",
    unit: "",
    group: "computes",
    source: "probe",
    level: "full",
    value: perReading((r) => r.used),
  },
  {
    name: "pgcp_endpoint_compute_start_timestamp_seconds",
    type: "gauge",
    labels: ["project", "endpoint"],
    help: "When the compute last started, as its latest reading tells.",
    unit: "seconds",
    group: "computes",
    source: "probe",
    level: "full",
    value: perReading((r) => r.startedAtMs / 1000),
  },
  {
    name: "pgcp_compute_probe_up",
    type: "gauge",
    labels: ["project", "endpoint"],
    help: "1 when the latest probe of the endpoint's compute succeeded, 0 when it failed (pgcp_compute_probe_failures_total and the status page say why); absent before the first.",
    unit: "",
    group: "computes",
    source: "probe",
    level: "standard",
    value: perCompute((c) => (c.up === undefined ? undefined : c.up ? 1 : 0)),
  },
  {
    name: "pgcp_compute_probe_last_success_timestamp_seconds",
    type: "gauge",
    labels: ["project", "endpoint"],
    help: "Time of the latest successful probe of the endpoint's compute (absent before the first).",
    unit: "seconds",
    group: "computes",
    source: "probe",
    level: "full",
    value: perCompute((c) => (c.lastSuccessMs === undefined ? undefined : c.lastSuccessMs / 1000)),
  },
  {
    name: "pgcp_compute_probe_state",
    type: "gauge",
    labels: ["project", "endpoint", "state"],
    help: "Where the probe stands with the endpoint's compute, as one series labelled with the state: idle (not active: never connected to), waiting (its first reading is due), following (others use it: read every interval), quiet (nobody else used it at the latest reading: not read again before it starts again) or backoff (the latest probe failed); always 1.",
    unit: "",
    group: "computes",
    source: "probe",
    level: "full",
    value: {
      reads: [computes],
      *series({ projectId: project, computes: all }) {
        for (const c of all?.values() ?? []) {
          yield { labels: { project, endpoint: c.endpointId, state: c.state }, value: 1 };
        }
      },
    },
  },
  {
    name: "pgcp_compute_probes_total",
    type: "counter",
    labels: ["result"],
    help: "Probes of computes, by result (success, failure): each is one connection to an active compute.",
    unit: "",
    group: "computes",
    source: "events",
  },
  {
    name: "pgcp_compute_probe_failures_total",
    type: "counter",
    labels: ["reason"],
    help: "Failed probes of computes, by reason (auth, no_database, permission, no_extension, view_columns, unexpected_answer, unreachable, tls, timeout, unavailable, other).",
    unit: "",
    group: "computes",
    source: "events",
  },
] as const satisfies readonly Family[];

/** What every compute family reads of a project's view. */
function computes(view: ProjectView): ReadonlyMap<string, ComputeView> | undefined {
  return view.computes;
}

/** One sample per compute the probe knows; `value` returning undefined leaves it out. */
function perCompute(value: (compute: ComputeView) => number | undefined): PerProject<Sample> {
  return {
    reads: [computes],
    *series({ projectId: project, computes: all }) {
      for (const c of all?.values() ?? []) {
        const v = value(c);
        if (v !== undefined) yield { labels: { project, endpoint: c.endpointId }, value: v };
      }
    },
  };
}

/** One sample per compute with a reading of its current start. */
function perReading(value: (reading: ComputeReading) => number | undefined): PerProject<Sample> {
  return perCompute((c) => (c.reading === undefined ? undefined : value(c.reading)));
}
