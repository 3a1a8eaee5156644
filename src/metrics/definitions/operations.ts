/**
 * Operation families, projected from each project's committed state (so exact across
 * restarts): arrival counters and duration histograms from the persisted totals, open and stuck
 * gauges from the followed operations, and the checkpoint's newest creation time.
 */
import type { ProjectState } from "../../store/index.js";
import { committed } from "../../sync/index.js";
import { BOTTOM } from "../../sync/position.js";
import { DURATION_BUCKETS_SECONDS, restoreTotals } from "../../sync/totals.js";
import type { Family } from "./family.js";
import { PAUSE, type HistogramSeries, type Labels, type Sample } from "./series.js";

type Arrival = ProjectState["totals"]["arrivals"][number];

export const OPERATION_FAMILIES = [
  {
    name: "pgcp_operations_total",
    type: "counter",
    labels: ["project", "action", "status"],
    help: "Arrivals of operations at an end status (finished, failed, error, cancelled, skipped); a retried operation that fails again arrives again.",
    unit: "",
    group: "operations",
    source: "state",
    value: {
      reads: [({ state }) => state?.totals.arrivals],
      *series({ projectId, state }) {
        for (const a of state?.totals.arrivals ?? []) {
          yield {
            labels: { project: projectId, action: a.action, status: a.status },
            value: a.count,
          };
        }
      },
    },
  },
  {
    name: "pgcp_operation_duration_seconds",
    type: "histogram",
    labels: ["action", "status"],
    help: "Time from creation to end status of the operations counted in pgcp_operations_total, over all projects.",
    unit: "seconds",
    group: "operations",
    source: "state",
    buckets: DURATION_BUCKETS_SECONDS,
    *value({ projects }) {
      // Summed over projects: every project counts with the same bucket bounds. Each series is
      // found by action, then status, and kept in the order first met.
      const byAction = new Map<string, Map<string, Merged>>();
      const merged: Merged[] = [];
      for (const { state } of committed(projects)) {
        yield PAUSE;
        for (const a of arrivalsWithBuckets(state)) {
          let byStatus = byAction.get(a.action);
          if (byStatus === undefined)
            byAction.set(a.action, (byStatus = new Map<string, Merged>()));
          const into = byStatus.get(a.status);
          if (into === undefined) {
            const labels = { action: a.action, status: a.status };
            const series = { labels, buckets: [...a.buckets], sum: a.durationSum, count: a.count };
            byStatus.set(a.status, series);
            merged.push(series);
            continue;
          }
          for (let i = 0; i < a.buckets.length; i++) {
            into.buckets[i] = (into.buckets[i] ?? 0) + (a.buckets[i] ?? 0);
          }
          into.sum += a.durationSum;
          into.count += a.count;
        }
      }
      yield* merged;
    },
  },
  {
    name: "pgcp_project_operation_duration_seconds",
    type: "histogram",
    labels: ["project", "action", "status"],
    help: "pgcp_operation_duration_seconds per project (only with the perProjectHistograms option).",
    unit: "seconds",
    group: "operations",
    source: "state",
    buckets: DURATION_BUCKETS_SECONDS,
    optIn: "perProjectHistograms",
    value: {
      reads: [({ state }) => state?.totals],
      *series({ projectId, state }) {
        if (state === undefined) return;
        for (const a of arrivalsWithBuckets(state)) {
          yield seriesOf({ project: projectId, action: a.action, status: a.status }, a);
        }
      },
    },
  },
  {
    name: "pgcp_operations_open",
    type: "gauge",
    labels: ["project", "action", "status"],
    help: "Operations followed that have not reached an end status, by current status (a series exists while at least one is open).",
    unit: "",
    group: "operations",
    source: "state",
    value: {
      series({ projectId, state }) {
        // A failed operation is followed only in case the service retries it: it is not open.
        const open = (state?.tracked ?? []).filter((t) => t.status !== "failed");
        return tally(open.map((t) => ({ project: projectId, action: t.action, status: t.status })));
      },
    },
  },
  {
    name: "pgcp_operation_retries_total",
    type: "counter",
    labels: ["project", "action"],
    help: "Retries of failed operations by the service: failures it moved on from (failures_count, less a failure the operation still sits in).",
    unit: "",
    group: "operations",
    source: "state",
    level: "standard",
    value: {
      *series({ projectId, state }) {
        for (const [action, value] of Object.entries(state?.totals.retries ?? {})) {
          yield { labels: { project: projectId, action }, value };
        }
      },
    },
  },
  {
    name: "pgcp_operations_stuck",
    type: "gauge",
    labels: ["project", "action"],
    help: "Open operations older than their action's stuck threshold (a series exists while at least one is stuck).",
    unit: "",
    group: "operations",
    source: "state",
    value: {
      series({ projectId, state }) {
        // Only open ones: an operation found stuck that then failed keeps its flag (its alert)
        // while it is watched for a retry, but it is no longer open, so no longer stuck.
        const stuck = (state?.tracked ?? []).filter((t) => t.stuck && t.status !== "failed");
        return tally(stuck.map((t) => ({ project: projectId, action: t.action })));
      },
    },
  },
  {
    name: "pgcp_project_newest_operation_timestamp_seconds",
    type: "gauge",
    labels: ["project"],
    help: "Creation time of the newest operation the committed checkpoint covers (absent until the project has an operation).",
    unit: "seconds",
    group: "operations",
    source: "state",
    level: "full",
    value: {
      *series({ projectId, state }) {
        if (state === undefined || state.watermark.second === BOTTOM.second) return;
        yield { labels: { project: projectId }, value: state.watermark.second };
      },
    },
  },
] as const satisfies readonly Family[];

/** A histogram series being summed over projects. */
interface Merged {
  readonly labels: Labels;
  readonly buckets: number[];
  sum: number;
  count: number;
}

/**
 * The arrivals with bucket counts for this build's bounds. A state file written with other
 * bounds cannot be re-divided, so its bucket counts read as zero (its counts and sums stay);
 * the sync engine applies the same rule when it next commits.
 */
function arrivalsWithBuckets(state: ProjectState): readonly Arrival[] {
  return restoreTotals(state.totals).totals.arrivals;
}

function seriesOf(labels: Labels, a: Arrival): HistogramSeries {
  return { labels, buckets: a.buckets, sum: a.durationSum, count: a.count };
}

/** One sample per distinct label set, counting how often it occurs. */
function tally(labelSets: readonly Labels[]): Sample[] {
  const counts = new Map<string, { labels: Labels; value: number }>();
  for (const labels of labelSets) {
    const key = JSON.stringify(Object.values(labels));
    const sample = counts.get(key);
    if (sample === undefined) counts.set(key, { labels, value: 1 });
    else sample.value += 1;
  }
  return [...counts.values()];
}
