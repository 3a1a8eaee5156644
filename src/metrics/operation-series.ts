/**
 * Operation families, projected from each project's committed state: arrival counters and
 * duration histograms from the persisted totals, open and stuck gauges from the followed
 * operations, and the checkpoint's newest creation time.
 */
import type { ProjectState } from "../store/index.js";
import { BOTTOM } from "../sync/position.js";
import { restoreTotals } from "../sync/totals.js";
import {
  PAUSE,
  type HistogramSeries,
  type Labels,
  type Projections,
  type Sample,
} from "./projected-family.js";
import { committed } from "../sync/index.js";

type Arrival = ProjectState["totals"]["arrivals"][number];

export const operationProjections = {
  pgcp_operations_total: {
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

  *pgcp_operation_duration_seconds({ projects }) {
    // Summed over projects: every project counts with the same bucket bounds. Each series is
    // found by action, then status, and kept in the order first met.
    const byAction = new Map<string, Map<string, Merged>>();
    const merged: Merged[] = [];
    for (const { state } of committed(projects)) {
      yield PAUSE;
      for (const a of arrivalsWithBuckets(state)) {
        let byStatus = byAction.get(a.action);
        if (byStatus === undefined) byAction.set(a.action, (byStatus = new Map<string, Merged>()));
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

  pgcp_project_operation_duration_seconds: {
    reads: [({ state }) => state?.totals],
    *series({ projectId, state }) {
      if (state === undefined) return;
      for (const a of arrivalsWithBuckets(state)) {
        yield seriesOf({ project: projectId, action: a.action, status: a.status }, a);
      }
    },
  },

  pgcp_operations_open: {
    series({ projectId, state }) {
      // A failed operation is followed only in case the service retries it: it is not open.
      const open = (state?.tracked ?? []).filter((t) => t.status !== "failed");
      return tally(open.map((t) => ({ project: projectId, action: t.action, status: t.status })));
    },
  },

  pgcp_operation_retries_total: {
    *series({ projectId, state }) {
      for (const [action, value] of Object.entries(state?.totals.retries ?? {})) {
        yield { labels: { project: projectId, action }, value };
      }
    },
  },

  pgcp_operations_stuck: {
    series({ projectId, state }) {
      // Only open ones: an operation found stuck that then failed keeps its flag (its alert)
      // while it is watched for a retry, but it is no longer open, so no longer stuck.
      const stuck = (state?.tracked ?? []).filter((t) => t.stuck && t.status !== "failed");
      return tally(stuck.map((t) => ({ project: projectId, action: t.action })));
    },
  },

  pgcp_project_newest_operation_timestamp_seconds: {
    *series({ projectId, state }) {
      if (state === undefined || state.watermark.second === BOTTOM.second) return;
      yield { labels: { project: projectId }, value: state.watermark.second };
    },
  },
} satisfies Partial<Projections>;

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
