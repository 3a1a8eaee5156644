/**
 * The overview dashboard: what the watched projects' control plane does. Operations by action
 * and status, failures, durations, open and stuck operations, endpoints with their states and
 * sizes, cold starts, and what the compute probe reads of active computes.
 */
import { finish, newDashboard, type Dashboard } from "./dashboard.js";
import {
  countStat,
  graphPanel,
  headlineStat,
  percentiles,
  row,
  sumBy,
  sumByProject,
  tablePanel,
  thresholds,
} from "./panels.js";
import { perInterval, quantile, rate, sel, withProjectName } from "./promql.js";

/** Arrivals at an end status that count as failures (cancelled and skipped do not). */
const FAILED = 'status=~"failed|error"';

const OPERATIONS = sel("pgcp_operations_total");
const FAILURES = sel("pgcp_operations_total", FAILED);

/** Endpoints of the latest listings, one series per current state. */
const ENDPOINTS_BY_STATE = {
  expr: `count by (state) (${sel("pgcp_endpoint_current_state")})`,
  legend: "{{state}}",
};

function durationPanel(q: number) {
  return graphPanel({
    title: `Duration p${Math.round(q * 100)} by action`,
    description:
      "Time from creation to `finished` of the operations that finished, by action, over every project (the duration histogram has no project label; `perProjectHistograms` adds one per project).",
    queries: [
      {
        expr: quantile(q, "pgcp_operation_duration_seconds", ["action"], 'status="finished"'),
        legend: "{{action}}",
      },
    ],
    unit: "s",
    width: 8,
  });
}

/**
 * The panels of what the compute probe reads: they have data only while it is on, which needs
 * computes on a real PostgreSQL (the Postgres tests run them; the other end-to-end test cannot).
 */
export const COMPUTE_PANELS = [
  "File cache hit ratio",
  "Connections of max_connections",
  "Probe failures by reason",
  "Larger compute advised",
] as const;

/** `max by (project, endpoint, <extra>) (<expr>)`: one row per endpoint, without `__name__`. */
function perEndpoint(expr: string, ...extra: string[]): string {
  return `max by (${["project", "endpoint", ...extra].join(", ")}) (${expr})`;
}

export function overviewDashboard(): Dashboard {
  const builder = newDashboard({
    uid: "pgcp-overview",
    title: "pgcp-exporter / Overview",
    description:
      "Operations, failures, durations, stuck operations, endpoints and cold starts of the projects pgcp-exporter watches.",
  })
    // Headline numbers over the dashboard's time range.
    .withPanel(
      countStat({
        title: "Operations ended",
        description:
          "Arrivals of operations at an end status (finished, failed, error, cancelled, skipped) in the time range.",
        queries: [{ expr: `sum(increase(${OPERATIONS}[$__range]))` }],
      }),
    )
    .withPanel(
      headlineStat({
        title: "Failure ratio",
        description:
          "Share of the end-status arrivals in the time range that were `failed` or `error`.",
        queries: [
          {
            expr: `sum(increase(${FAILURES}[$__range])) / sum(increase(${OPERATIONS}[$__range]))`,
          },
        ],
        unit: "percentunit",
        decimals: 1,
        thresholds: thresholds("green", [0.05, "orange"], [0.2, "red"]),
      }),
    )
    .withPanel(
      countStat({
        title: "Open operations",
        description: "Operations followed now that have not reached an end status.",
        queries: [{ expr: `sum(${sel("pgcp_operations_open")}) or vector(0)` }],
      }),
    )
    .withPanel(
      countStat({
        title: "Stuck operations",
        description:
          "Open operations older than their action's stuck threshold (`stuck.default`, `stuck.actions`).",
        queries: [{ expr: `sum(${sel("pgcp_operations_stuck")}) or vector(0)` }],
        thresholds: thresholds("green", [1, "red"]),
      }),
    )
    .withPanel(
      countStat({
        title: "Endpoints by state",
        description: "Endpoints of the latest listings, by current state.",
        queries: [ENDPOINTS_BY_STATE],
        text: "value_and_name",
        thresholds: thresholds("blue"),
      }),
    )
    .withPanel(
      countStat({
        title: "Cold starts",
        description:
          "Finished `start_compute` operations of the projects' endpoints in the time range: computes started from idle.",
        queries: [
          { expr: `sum(increase(${sel("pgcp_project_endpoint_starts_total")}[$__range]))` },
        ],
        thresholds: thresholds("blue"),
      }),
    )

    .withRow(row("Operations"))
    .withPanel(
      graphPanel({
        title: "Operation rate by action and status",
        description: "End-status arrivals per second, by action and end status.",
        queries: [sumBy(["action", "status"], rate(OPERATIONS))],
        unit: "ops",
        stack: true,
        width: 12,
      }),
    )
    .withPanel(
      graphPanel({
        title: "Failure rate by action",
        description:
          "Arrivals at `failed` or `error` per second, by action (a retried operation that fails again arrives again).",
        queries: [sumBy(["action"], rate(FAILURES))],
        unit: "ops",
        stack: true,
        width: 12,
      }),
    )
    .withPanel(
      graphPanel({
        title: "Failure ratio by action",
        description: "Share of each action's end-status arrivals that were `failed` or `error`.",
        queries: [
          {
            expr: `sum by (action) (${rate(FAILURES)}) / sum by (action) (${rate(OPERATIONS)})`,
            legend: "{{action}}",
          },
        ],
        unit: "percentunit",
        width: 12,
      }),
    )
    .withPanel(
      graphPanel({
        title: "Retries by action",
        description:
          "Failed operations the service retried (failures it moved on from), per second, by action.",
        queries: [sumBy(["action"], rate(sel("pgcp_operation_retries_total")))],
        unit: "ops",
        stack: true,
        width: 12,
      }),
    )

    .withRow(row("Durations"))
    .withPanel(durationPanel(0.5))
    .withPanel(durationPanel(0.9))
    .withPanel(durationPanel(0.99))

    .withRow(row("Open and stuck operations"))
    .withPanel(
      graphPanel({
        title: "Open operations by action and status",
        description:
          "Operations followed that have not reached an end status, by action and current status.",
        queries: [sumBy(["action", "status"], sel("pgcp_operations_open"))],
        unit: "short",
        stack: true,
        width: 12,
      }),
    )
    .withPanel(
      graphPanel({
        title: "Stuck operations by project and action",
        description:
          "Open operations older than their action's stuck threshold, by project (named) and action.",
        queries: [sumByProject(["action"], sel("pgcp_operations_stuck"))],
        unit: "short",
        stack: true,
        width: 12,
      }),
    )

    .withRow(row("Endpoints"))
    .withPanel(
      graphPanel({
        title: "Endpoint states over time",
        description: "Endpoints of the latest listings, by current state (init, active, idle).",
        queries: [ENDPOINTS_BY_STATE],
        unit: "short",
        stack: true,
        width: 6,
      }),
    )
    .withPanel(
      graphPanel({
        title: "Autoscaling limits",
        description:
          "Sum of the endpoints' minimum and maximum autoscaling sizes, in compute units (1 CU = 1 vCPU, 4 GB RAM).",
        queries: [
          {
            expr: `sum(${sel("pgcp_project_autoscaling_min_compute_units")})`,
            legend: "minimum",
          },
          {
            expr: `sum(${sel("pgcp_project_autoscaling_max_compute_units")})`,
            legend: "maximum",
          },
        ],
        unit: "short",
        width: 6,
      }),
    )
    .withPanel(
      graphPanel({
        title: "Cold starts and suspends",
        description:
          "Finished `start_compute` (cold starts) and `suspend_compute` operations of the project's endpoints per interval, by project (named).",
        queries: [
          sumByProject([], perInterval(sel("pgcp_project_endpoint_starts_total")), "starts"),
          sumByProject([], perInterval(sel("pgcp_project_endpoint_suspends_total")), "suspends"),
        ],
        unit: "short",
        bars: true,
        interval: "1m",
        width: 6,
      }),
    )
    .withPanel(
      graphPanel({
        title: "Cold start duration",
        description:
          "Time `start_compute` operations took to finish, over every project: how long a connection to an idle compute waits.",
        queries: percentiles(
          (q) =>
            quantile(
              q,
              "pgcp_operation_duration_seconds",
              [],
              'action="start_compute"',
              'status="finished"',
            ),
          (name) => name,
        ),
        unit: "s",
        width: 6,
      }),
    )
    .withPanel(
      tablePanel({
        title: "Endpoints",
        description:
          "Each endpoint of the latest listings, with its project's name: its state and autoscaling limits (compute units), and the idle time after which it suspends (+Inf: never).",
        queries: [
          {
            expr: withProjectName(
              perEndpoint(
                sel("pgcp_endpoint_info"),
                "branch",
                "endpoint_type",
                "region_id",
                "min_compute_units",
                "max_compute_units",
                "auto_suspend_delay_seconds",
              ),
            ),
          },
          { expr: perEndpoint(sel("pgcp_endpoint_current_state"), "state") },
        ],
        transformations: [
          { id: "merge", options: {} },
          {
            id: "organize",
            options: {
              excludeByName: { Time: true, "Value #A": true, "Value #B": true },
              indexByName: {
                name: 0,
                project: 1,
                endpoint: 2,
                branch: 3,
                endpoint_type: 4,
                region_id: 5,
                state: 6,
                min_compute_units: 7,
                max_compute_units: 8,
                auto_suspend_delay_seconds: 9,
              },
              renameByName: {
                name: "project name",
                endpoint_type: "type",
                region_id: "region",
                min_compute_units: "min CU",
                max_compute_units: "max CU",
                auto_suspend_delay_seconds: "suspends after (s)",
              },
            },
          },
        ],
        sortBy: { displayName: "project name" },
        width: 24,
        height: 10,
      }),
    )

    // The compute probe's readings: empty unless `computes.enabled` is set.
    .withRow(row("Computes (the compute probe)"))
    .withPanel(
      graphPanel({
        title: "File cache hit ratio",
        description:
          "Each active compute's file cache hit ratio since it started, as its `neon_stat_file_cache` view gives it. Below about 99% a transactional workload's working set is not cached. Empty unless the compute probe is on (`computes.enabled`).",
        queries: [
          {
            expr: withProjectName(perEndpoint(sel("pgcp_endpoint_file_cache_hit_ratio"))),
            legend: "{{name}} {{endpoint}}",
          },
        ],
        unit: "percent",
        width: 6,
      }),
    )
    .withPanel(
      graphPanel({
        title: "Connections of max_connections",
        description:
          "Each active compute's client sessions as a share of its `max_connections`, which follows the minimum size of its autoscaling range and does not grow when it scales up.",
        queries: [
          {
            expr: withProjectName(
              `${perEndpoint(sel("pgcp_endpoint_connections"))} / ${perEndpoint(sel("pgcp_endpoint_max_connections"))}`,
            ),
            legend: "{{name}} {{endpoint}}",
          },
        ],
        unit: "percentunit",
        width: 6,
      }),
    )
    .withPanel(
      graphPanel({
        title: "Probe failures by reason",
        description:
          "Failed probes of computes per interval, by reason (auth, no_extension, view_columns, timeout, unreachable, …); the status page names the computes and their errors.",
        queries: [sumBy(["reason"], perInterval(sel("pgcp_compute_probe_failures_total")))],
        unit: "short",
        bars: true,
        interval: "1m",
        width: 6,
      }),
    )
    .withPanel(
      tablePanel({
        title: "Larger compute advised",
        description:
          "Computes for which a larger compute is advised, by reason: `file_cache` (the hit ratio stayed below `computes.advice.hitRatio` for the advice window after the warm-up) or `connections` (the sessions stayed near `max_connections`). docs/runbooks.md#pgcplargercomputeadvised says what it costs and what to change.",
        queries: [
          {
            expr: withProjectName(
              `${perEndpoint(sel("pgcp_endpoint_larger_compute_advised"), "reason")} == 1`,
            ),
          },
        ],
        transformations: [
          {
            id: "organize",
            options: {
              excludeByName: { Time: true, Value: true },
              indexByName: { name: 0, project: 1, endpoint: 2, reason: 3 },
              renameByName: { name: "project name" },
            },
          },
        ],
        sortBy: { displayName: "project name" },
        width: 6,
        height: 8,
      }),
    );
  return finish(builder);
}
