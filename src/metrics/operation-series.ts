/**
 * Operation families, projected from each project's committed state: arrival counters and
 * duration histograms from the persisted totals, open and stuck gauges from the followed
 * operations, and the checkpoint's newest creation time.
 */
import type { ProjectState } from "../store/index.js";
import { BOTTOM } from "../sync/position.js";
import { restoreTotals } from "../sync/totals.js";
import type { HistogramSeries, Labels, Projections, Sample } from "./projected-family.js";
import { committed } from "../sync/index.js";

type Arrival = ProjectState["totals"]["arrivals"][number];

export const operationProjections = {
  *pgcp_operations_total({ projects }) {
    for (const { projectId, state } of committed(projects)) {
      for (const a of state.totals.arrivals) {
        yield {
          labels: { project: projectId, action: a.action, status: a.status },
          value: a.count,
        };
      }
    }
  },

  pgcp_operation_duration_seconds({ projects }) {
    // Summed over projects: every project counts with the same bucket bounds.
    const merged = new Map<string, HistogramSeries>();
    for (const { state } of committed(projects)) {
      for (const a of arrivalsWithBuckets(state)) {
        const labels = { action: a.action, status: a.status };
        const key = JSON.stringify([a.action, a.status]);
        merged.set(key, addSeries(merged.get(key), seriesOf(labels, a)));
      }
    }
    return merged.values();
  },

  *pgcp_project_operation_duration_seconds({ projects }) {
    for (const { projectId, state } of committed(projects)) {
      for (const a of arrivalsWithBuckets(state)) {
        yield seriesOf({ project: projectId, action: a.action, status: a.status }, a);
      }
    }
  },

  *pgcp_operations_open({ projects }) {
    for (const { projectId, state } of committed(projects)) {
      // A failed operation is followed only in case the service retries it: it is not open.
      const open = state.tracked.filter((t) => t.status !== "failed");
      yield* tally(open.map((t) => ({ project: projectId, action: t.action, status: t.status })));
    }
  },

  *pgcp_operation_retries_total({ projects }) {
    for (const { projectId, state } of committed(projects)) {
      for (const [action, value] of Object.entries(state.totals.retries)) {
        yield { labels: { project: projectId, action }, value };
      }
    }
  },

  *pgcp_operations_stuck({ projects }) {
    for (const { projectId, state } of committed(projects)) {
      // Only open ones: an operation found stuck that then failed keeps its flag (its alert)
      // while it is watched for a retry, but it is no longer open, so no longer stuck.
      const stuck = state.tracked.filter((t) => t.stuck && t.status !== "failed");
      yield* tally(stuck.map((t) => ({ project: projectId, action: t.action })));
    }
  },

  *pgcp_project_newest_operation_timestamp_seconds({ projects }) {
    for (const { projectId, state } of committed(projects)) {
      if (state.watermark.second === BOTTOM.second) continue;
      yield { labels: { project: projectId }, value: state.watermark.second };
    }
  },
} satisfies Partial<Projections>;

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

function addSeries(into: HistogramSeries | undefined, add: HistogramSeries): HistogramSeries {
  if (into === undefined) return add;
  return {
    labels: into.labels,
    buckets: add.buckets.map((n, i) => n + (into.buckets[i] ?? 0)),
    sum: into.sum + add.sum,
    count: into.count + add.count,
  };
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
