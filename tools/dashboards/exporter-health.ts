/**
 * The exporter health dashboard: whether pgcp-exporter itself does its job. Poll freshness and
 * outcomes, the scheduler, the replicas sharing the projects (Postgres state store),
 * control-plane API requests and rate limiting, the alert notifier's queue.
 */
import { finish, newDashboard, type Dashboard } from "./dashboard.js";
import {
  countStat,
  graphPanel,
  headlineStat,
  percentiles,
  row,
  stateTimelinePanel,
  sumBy,
  sumByProject,
  thresholds,
  valueMappings,
} from "./panels.js";
import { perInterval, quantile, rate, sel, withProjectName, type HistogramName } from "./promql.js";

/**
 * The panels of the replicas sharing the projects: they have data only with the Postgres state
 * store (the Postgres tests run it; the other end-to-end test cannot).
 */
export const REPLICA_PANELS = [
  "Projects held per replica",
  "Live replicas and projects without a live holder",
] as const;

/** Seconds since a project's latest committed poll. */
const POLL_AGE = `time() - ${sel("pgcp_project_last_success_timestamp_seconds")}`;

/** p50 and p99 of a histogram of seconds, one series per value of `by`. */
function latencyPanel(title: string, description: string, family: HistogramName, by: string) {
  return graphPanel({
    title,
    description,
    queries: percentiles(
      (q) => quantile(q, family, [by]),
      (name) => `${name} {{${by}}}`,
      [0.5, 0.99],
    ),
    unit: "s",
    width: 8,
  });
}

export function exporterHealthDashboard(): Dashboard {
  const builder = newDashboard({
    uid: "pgcp-exporter-health",
    title: "pgcp-exporter / Exporter health",
    description:
      "Poll freshness and outcomes, control-plane API requests and rate limiting, and the alert notifier's queue of pgcp-exporter.",
  })
    .withPanel(
      countStat({
        title: "Projects up",
        description: "Watched projects whose latest poll succeeded and was committed.",
        queries: [{ expr: `sum(${sel("pgcp_project_up")})` }],
        thresholds: thresholds("blue"),
      }),
    )
    .withPanel(
      countStat({
        title: "Projects down",
        description:
          "Watched projects whose latest poll failed or could not be committed (or that were not polled yet).",
        queries: [{ expr: `count(${sel("pgcp_project_up")} == 0) or vector(0)` }],
        thresholds: thresholds("green", [1, "red"]),
      }),
    )
    .withPanel(
      countStat({
        title: "Blocked projects",
        description:
          "Projects not polled because their state file cannot be used (corrupt, foreign, version, unreadable, unwritable).",
        queries: [{ expr: `count(${sel("pgcp_project_blocked")} == 1) or vector(0)` }],
        thresholds: thresholds("green", [1, "red"]),
      }),
    )
    .withPanel(
      headlineStat({
        title: "Oldest successful poll",
        description:
          "Age of the least recent committed poll of the watched projects: how stale the oldest project's numbers are.",
        queries: [{ expr: `max(${POLL_AGE})` }],
        unit: "s",
        decimals: 0,
        thresholds: thresholds("green", [300, "orange"], [600, "red"]),
      }),
    )
    .withPanel(
      headlineStat({
        title: "Poll interval stretch",
        description:
          "Factor by which poll intervals are stretched to keep requests within the rate-limit budget (the most stretched account); 1 when they fit.",
        queries: [{ expr: `max(${sel("pgcp_scheduler_interval_stretch_ratio")})` }],
        unit: "x",
        decimals: 2,
        thresholds: thresholds("green", [1.5, "orange"], [2, "red"]),
      }),
    )
    .withPanel(
      headlineStat({
        title: "Exporter version",
        description: "Version of pgcp-exporter and of Node.js it runs on.",
        queries: [
          {
            expr: `max by (version, node_version) (${sel("pgcp_build_info")})`,
            legend: "{{version}} (Node.js {{node_version}})",
          },
        ],
        text: "name",
        thresholds: thresholds("text"),
      }),
    )

    .withRow(row("Polling"))
    .withPanel(
      stateTimelinePanel({
        title: "Project polls",
        description:
          "Outcome of each project's latest poll, by project name: up when it succeeded and was committed.",
        queries: [{ expr: withProjectName(sel("pgcp_project_up")), legend: "{{name}}" }],
        mappings: valueMappings({
          "1": { text: "up", color: "green" },
          "0": { text: "down", color: "red" },
        }),
        width: 12,
        height: 8,
      }),
    )
    .withPanel(
      graphPanel({
        title: "Time since last successful poll",
        description:
          "Seconds since each project's latest committed poll (also one of an earlier run of the exporter), by project name.",
        queries: [{ expr: withProjectName(POLL_AGE), legend: "{{name}}" }],
        unit: "s",
        width: 12,
      }),
    )
    .withPanel(
      latencyPanel(
        "Poll duration",
        "Duration of project polls including the commit, by result.",
        "pgcp_poll_duration_seconds",
        "result",
      ),
    )
    .withPanel(
      graphPanel({
        title: "Polls, commits and listings",
        description:
          "Project polls, state commits and endpoint listings per second by result, and failed discoveries of the account's projects.",
        queries: [
          sumBy(["result"], rate(sel("pgcp_poll_duration_seconds_count")), "polls"),
          sumBy(["result"], rate(sel("pgcp_state_commits_total")), "commits"),
          sumBy(["result"], rate(sel("pgcp_endpoint_listings_total")), "listings"),
          {
            expr: `sum(${rate(sel("pgcp_discovery_failures_total"))})`,
            legend: "discovery failures",
          },
        ],
        unit: "ops",
        width: 8,
      }),
    )
    .withPanel(
      graphPanel({
        title: "Poll interval by account and lane",
        description:
          "Interval at which each account's projects are polled now, after stretching: fast for projects with open operations, base for the others.",
        queries: [
          {
            expr: `max by (account, lane) (${sel("pgcp_scheduler_poll_interval_seconds")})`,
            legend: "{{account}} {{lane}}",
          },
        ],
        unit: "s",
        width: 8,
      }),
    )
    .withPanel(
      graphPanel({
        title: "Blocked and catching-up projects",
        description:
          "Projects not polled because of their state file, by problem; projects walking a long gap in their operations log.",
        queries: [
          sumBy(["problem"], sel("pgcp_project_blocked"), "blocked:"),
          { expr: `sum(${sel("pgcp_project_catching_up")})`, legend: "catching up" },
        ],
        unit: "short",
        width: 24,
        height: 6,
      }),
    )

    .withRow(row("Replicas (Postgres state store)"))
    .withPanel(
      graphPanel({
        title: REPLICA_PANELS[0],
        description:
          "Projects each replica holds a lease on (and so polls), by replica id, and the projects all the replicas share.",
        queries: [
          {
            expr: `count by (job, instance) (${sel("pgcp_lease_held")}) * on (job, instance) group_left (replica) max by (job, instance, replica) (${sel("pgcp_lease_replica_info")})`,
            legend: "{{replica}}",
          },
          { expr: `max(${sel("pgcp_lease_fleet_projects")})`, legend: "shared by all" },
        ],
        unit: "short",
        width: 12,
      }),
    )
    .withPanel(
      graphPanel({
        title: REPLICA_PANELS[1],
        description:
          "Replicas with a live heartbeat, and projects with no live holder (a lease free or expired by the database's clock; a takeover shows them for about a heartbeat), the largest count of any replica.",
        queries: [
          { expr: `max(${sel("pgcp_lease_replicas")})`, legend: "live replicas" },
          {
            expr: `max(${sel("pgcp_projects_unowned")})`,
            legend: "projects without a live holder",
          },
        ],
        unit: "short",
        width: 12,
      }),
    )

    .withRow(row("Control-plane API"))
    .withPanel(
      graphPanel({
        title: "API requests by route and code",
        description:
          "Requests (each attempt, retries included) per second, by route and outcome: the HTTP status, or network or timeout.",
        queries: [sumBy(["route", "code"], rate(sel("pgcp_api_requests_total")))],
        unit: "reqps",
        stack: true,
        width: 12,
      }),
    )
    .withPanel(
      graphPanel({
        title: "API error ratio by route",
        description:
          "Share of each route's requests that got no 2xx answer (4xx, 5xx, 429, network errors, timeouts).",
        queries: [
          {
            expr: `sum by (route) (${rate(sel("pgcp_api_requests_total", 'code!~"2.."'))}) / sum by (route) (${rate(sel("pgcp_api_requests_total"))})`,
            legend: "{{route}}",
          },
        ],
        unit: "percentunit",
        width: 12,
      }),
    )
    .withPanel(
      latencyPanel(
        "API request duration",
        "Duration of API requests until the response was read, by route.",
        "pgcp_api_request_duration_seconds",
        "route",
      ),
    )
    .withPanel(
      graphPanel({
        title: "API retries by reason",
        description:
          "Failed API requests that were repeated, per second, by reason (http_<status>, network, timeout, invalid_response).",
        queries: [sumBy(["reason"], rate(sel("pgcp_api_retries_total")))],
        unit: "reqps",
        stack: true,
        width: 8,
      }),
    )
    .withPanel(
      graphPanel({
        title: "429 responses",
        description:
          "429 responses per interval, by route: each paused its account's rate limiter for every caller of that account.",
        queries: [sumBy(["route"], perInterval(sel("pgcp_api_rate_limit_pauses_total")))],
        unit: "short",
        bars: true,
        interval: "1m",
        width: 8,
      }),
    )
    .withPanel(
      graphPanel({
        title: "Rate-limiter queueing",
        description:
          "Requests that queued at their account's rate limiter before they could be sent, per second, by route.",
        queries: [sumBy(["route"], rate(sel("pgcp_api_rate_limit_waits_total")))],
        unit: "reqps",
        stack: true,
        width: 8,
      }),
    )
    .withPanel(
      graphPanel({
        title: "Time queued and paused",
        description:
          "Queued: seconds requests spent waiting at the rate limiter per second (the average number of requests waiting). Paused: share of the time the limiter was paused after 429 responses.",
        queries: [
          {
            expr: `sum(${rate(sel("pgcp_api_rate_limit_wait_seconds_total"))})`,
            legend: "requests queued (average)",
          },
          {
            expr: `sum(${rate(sel("pgcp_api_rate_limit_pause_seconds_total"))})`,
            legend: "paused (share of time)",
          },
        ],
        unit: "short",
        width: 8,
      }),
    )
    .withPanel(
      graphPanel({
        title: "Rate-limiter tokens",
        description:
          "Requests each account's rate limiter's token bucket would let through at once now.",
        queries: [
          {
            expr: `min by (account) (${sel("pgcp_api_rate_limit_tokens")})`,
            legend: "{{account}}",
          },
        ],
        unit: "short",
        width: 8,
      }),
    )

    .withRow(row("Alert notifier"))
    .withPanel(
      graphPanel({
        title: "Pending alerts by sink",
        description: "Alerts in the durable outbox that the sink has not acknowledged yet.",
        queries: [sumBy(["sink"], sel("pgcp_alerts_pending"))],
        unit: "short",
        width: 8,
      }),
    )
    .withPanel(
      graphPanel({
        title: "Oldest pending alert",
        description: "Age of the oldest alert each sink has not acknowledged yet.",
        queries: [
          {
            expr: `time() - min by (sink) (${sel("pgcp_alerts_oldest_pending_timestamp_seconds")})`,
            legend: "{{sink}}",
          },
        ],
        unit: "s",
        width: 8,
      }),
    )
    .withPanel(
      graphPanel({
        title: "Deliveries and failed attempts",
        description:
          "Alerts sinks acknowledged per second, and failed delivery attempts per second by reason.",
        queries: [
          sumBy(["sink"], rate(sel("pgcp_alerts_delivered_total")), "delivered"),
          sumBy(["sink", "reason"], rate(sel("pgcp_alert_delivery_failures_total")), "failed"),
        ],
        unit: "ops",
        width: 8,
      }),
    )
    .withPanel(
      latencyPanel(
        "Delivery latency",
        "Time from the detection of a transition to the sink's 2xx for its alert.",
        "pgcp_alert_delivery_latency_seconds",
        "sink",
      ),
    )
    .withPanel(
      graphPanel({
        title: "Dead letters kept",
        description:
          "Dead-lettered alerts kept in the committed state (the most recent per project), by sink.",
        queries: [sumBy(["sink"], sel("pgcp_alerts_dead_letters"))],
        unit: "short",
        width: 8,
      }),
    )
    .withPanel(
      graphPanel({
        title: "Alerts given up on",
        description:
          "Per interval: alerts dead-lettered (refused for good by the sink, or older than its maximum age), and new alerts dropped because a project's outbox was full, by project name.",
        queries: [
          sumBy(
            ["sink", "reason"],
            perInterval(sel("pgcp_alerts_dead_lettered_total")),
            "dead-lettered",
          ),
          sumByProject([], perInterval(sel("pgcp_alerts_dropped_total")), "dropped"),
        ],
        unit: "short",
        bars: true,
        interval: "1m",
        width: 8,
      }),
    );
  return finish(builder);
}
