/**
 * The metric catalogue: every metric family the exporter exposes, in one table. The prom-client
 * registry, the metrics reference (`docs/metrics.md`) and the naming tests are all derived from
 * it, so a family exists in all three or in none.
 */
import { DURATION_BUCKETS_SECONDS } from "../sync/totals.js";

export type MetricType = "counter" | "gauge" | "histogram";

/**
 * Where a family's values come from. This decides what a restart does to it: `state` families
 * resume from the committed state, `events` families count from zero again.
 */
export type MetricSource =
  /** Projected from the committed project state (survives restarts). */
  | "state"
  /** Projected from the latest endpoint listing of the project. */
  | "listing"
  /** Projected from the outcome of the project's latest poll. */
  | "outcome"
  /** Counted from events since the process started. */
  | "events"
  /** Read when the rendering is built (limiter, scheduler, build). */
  | "runtime";

/**
 * How much per-project and per-endpoint detail `/metrics` carries (`metrics.detail`), each
 * level serving the families of the levels before it too: `minimal`, what the shipped alert
 * rules read and whether each project is polled; `standard`, also what the shipped dashboards
 * read, with an endpoint as two series (its info, sizes included, and its current state);
 * `full`, every family, an endpoint's state as a state set and its sizes as gauges.
 */
export const DETAIL_LEVELS = ["minimal", "standard", "full"] as const;

export type DetailLevel = (typeof DETAIL_LEVELS)[number];

/** The sections of the reference. */
export type MetricGroup = "operations" | "endpoints" | "projects" | "exporter" | "api" | "alerts";

export interface MetricSpec {
  readonly name: string;
  readonly type: MetricType;
  readonly labels: readonly string[];
  /** One line, shown in `# HELP` and in the reference. */
  readonly help: string;
  /** The base unit the name ends with (before `_total`); empty for counts, flags and info. */
  readonly unit: string;
  readonly group: MetricGroup;
  readonly source: MetricSource;
  /** Upper bounds of a histogram's buckets, in `unit`. */
  readonly buckets?: readonly number[];
  /**
   * The least detail at which the family is served (`minimal` when absent). Families without
   * a per-project label are cheap and served at every level.
   */
  readonly level?: Exclude<DetailLevel, "minimal">;
  /** Registered only when this option is on, since it multiplies series. */
  readonly optIn?: "perProjectHistograms";
}

const POLL_DURATION_BUCKETS: readonly number[] = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const DELIVERY_LATENCY_BUCKETS: readonly number[] = [
  1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 21_600, 86_400,
];
const REQUEST_DURATION_BUCKETS: readonly number[] = [
  0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

export const CATALOGUE = [
  // Operations: projections of the committed state, so exact across restarts.
  {
    name: "pgcp_operations_total",
    type: "counter",
    labels: ["project", "action", "status"],
    help: "Arrivals of operations at an end status (finished, failed, error, cancelled, skipped); a retried operation that fails again arrives again.",
    unit: "",
    group: "operations",
    source: "state",
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
  },
  {
    name: "pgcp_operations_open",
    type: "gauge",
    labels: ["project", "action", "status"],
    help: "Operations followed that have not reached an end status, by current status (a series exists while at least one is open).",
    unit: "",
    group: "operations",
    source: "state",
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
  },
  {
    name: "pgcp_operations_stuck",
    type: "gauge",
    labels: ["project", "action"],
    help: "Open operations older than their action's stuck threshold (a series exists while at least one is stuck).",
    unit: "",
    group: "operations",
    source: "state",
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
  },

  // Endpoints: the latest listing; starts and suspends come from the committed totals.
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
  },
  {
    name: "pgcp_endpoint_max_connections",
    type: "gauge",
    labels: ["project", "endpoint"],
    help: "Postgres max_connections that follows from the minimum size (absent for a size outside the size table).",
    unit: "",
    group: "endpoints",
    source: "listing",
    level: "full",
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
  },

  // Projects: is each project watched properly?
  {
    name: "pgcp_project_up",
    type: "gauge",
    labels: ["project"],
    help: "1 when the project's latest poll succeeded and was committed, 0 otherwise (also before its first poll).",
    unit: "",
    group: "projects",
    source: "outcome",
  },
  {
    name: "pgcp_project_last_success_timestamp_seconds",
    type: "gauge",
    labels: ["project"],
    help: "Time of the project's latest committed poll, also by an earlier run (absent before the first).",
    unit: "seconds",
    group: "projects",
    source: "state",
  },
  {
    name: "pgcp_project_blocked",
    type: "gauge",
    labels: ["project", "problem"],
    help: "1 while the project is not polled because its state file cannot be used, by problem (corrupt, foreign, version, unreadable, unwritable).",
    unit: "",
    group: "projects",
    source: "outcome",
  },
  {
    name: "pgcp_project_catching_up",
    type: "gauge",
    labels: ["project"],
    help: "1 while a catch-up walk over a long gap in the operations log is in progress, else 0.",
    unit: "",
    group: "projects",
    source: "state",
    level: "standard",
  },

  // The exporter itself.
  {
    name: "pgcp_poll_duration_seconds",
    type: "histogram",
    labels: ["result"],
    help: "Duration of project polls including the commit, by result (success, or failure when an API request failed).",
    unit: "seconds",
    group: "exporter",
    source: "events",
    buckets: POLL_DURATION_BUCKETS,
  },
  {
    name: "pgcp_state_commits_total",
    type: "counter",
    labels: ["result"],
    help: "Commits of project state, by result (success, failure).",
    unit: "",
    group: "exporter",
    source: "events",
  },
  {
    name: "pgcp_endpoint_listings_total",
    type: "counter",
    labels: ["result"],
    help: "Endpoint listings of projects, by result (success, failure).",
    unit: "",
    group: "exporter",
    source: "events",
  },
  {
    name: "pgcp_discovery_failures_total",
    type: "counter",
    labels: ["account"],
    help: "Failed discoveries of an account's projects (its previous project list stays).",
    unit: "",
    group: "exporter",
    source: "events",
  },
  {
    name: "pgcp_account_up",
    type: "gauge",
    labels: ["account"],
    help: "1 while the API accepts the account's API key; 0 while it refuses it (401), when the account's projects wait and one poll at a time tries the key again with backoff.",
    unit: "",
    group: "exporter",
    source: "runtime",
  },
  {
    name: "pgcp_scheduler_projects",
    type: "gauge",
    labels: ["account"],
    help: "Projects an account's scheduler polls now (on this replica).",
    unit: "",
    group: "exporter",
    source: "runtime",
  },
  {
    name: "pgcp_scheduler_poll_interval_seconds",
    type: "gauge",
    labels: ["account", "lane"],
    help: "Interval at which an account's projects of a lane are polled now, after stretching (fast: projects with open operations; base: the others).",
    unit: "seconds",
    group: "exporter",
    source: "runtime",
  },
  {
    name: "pgcp_scheduler_interval_stretch_ratio",
    type: "gauge",
    labels: ["account"],
    help: "Factor by which every poll interval of an account is stretched to keep its requests within its rate-limit budget; 1 when they fit.",
    unit: "ratio",
    group: "exporter",
    source: "runtime",
  },
  {
    name: "pgcp_config_last_reload_successful",
    type: "gauge",
    labels: [],
    help: "Whether the last reload of the configuration (SIGHUP) succeeded: 1, or 0 when the file was refused and the running configuration kept; 1 before any reload.",
    unit: "",
    group: "exporter",
    source: "runtime",
  },
  {
    name: "pgcp_config_last_reload_success_timestamp_seconds",
    type: "gauge",
    labels: [],
    help: "When the configuration was last loaded successfully: at start, or by the last successful reload (Unix seconds).",
    unit: "seconds",
    group: "exporter",
    source: "runtime",
  },
  {
    name: "pgcp_build_info",
    type: "gauge",
    labels: ["version", "revision", "node_version"],
    help: "Version of the exporter, the git commit it was built from (empty when unknown) and the version of Node.js; always 1.",
    unit: "",
    group: "exporter",
    source: "runtime",
  },

  // Project leases (the Postgres state store): what this replica holds.
  {
    name: "pgcp_lease_held",
    type: "gauge",
    labels: ["project"],
    help: "1 for each project whose lease this replica holds (Postgres state store); only the holder polls a project and exports its series.",
    unit: "",
    group: "exporter",
    source: "runtime",
    level: "standard",
  },
  {
    name: "pgcp_lease_replicas",
    type: "gauge",
    labels: [],
    help: "Live replicas sharing the projects (a heartbeat within one lease duration), as counted at this replica's latest heartbeat.",
    unit: "",
    group: "exporter",
    source: "runtime",
  },
  {
    name: "pgcp_lease_target_projects",
    type: "gauge",
    labels: [],
    help: "Projects this replica aims to hold: its even share of the watched projects over the live replicas.",
    unit: "",
    group: "exporter",
    source: "runtime",
  },
  {
    name: "pgcp_lease_heartbeat_timestamp_seconds",
    type: "gauge",
    labels: [],
    help: "Time of this replica's latest successful lease heartbeat (registration, renewals, claims).",
    unit: "seconds",
    group: "exporter",
    source: "runtime",
  },
  {
    name: "pgcp_lease_acquisitions_total",
    type: "counter",
    labels: [],
    help: "Project leases this replica claimed (each claim increases the project's fencing token).",
    unit: "",
    group: "exporter",
    source: "events",
  },
  {
    name: "pgcp_lease_releases_total",
    type: "counter",
    labels: ["reason"],
    help: "Project leases this replica gave up, by reason (rebalance, removed: no longer watched, shutdown).",
    unit: "",
    group: "exporter",
    source: "events",
  },
  {
    name: "pgcp_lease_losses_total",
    type: "counter",
    labels: ["reason"],
    help: "Project leases this replica lost, by reason (taken: another replica claimed it; expired: heartbeats failed past the lease; fenced: the store rejected a commit).",
    unit: "",
    group: "exporter",
    source: "events",
  },
  {
    name: "pgcp_lease_fenced_commits_total",
    type: "counter",
    labels: [],
    help: "State commits (polls and outbox acknowledgements) rejected because this replica no longer held the project's lease; nothing of them was written.",
    unit: "",
    group: "exporter",
    source: "events",
  },
  {
    name: "pgcp_lease_heartbeat_failures_total",
    type: "counter",
    labels: [],
    help: "Lease heartbeats that failed (the database could not be reached, or answered an error).",
    unit: "",
    group: "exporter",
    source: "events",
  },

  // Requests to the control-plane API.
  {
    name: "pgcp_api_requests_total",
    type: "counter",
    labels: ["route", "code"],
    help: "API requests (each attempt) by route and outcome: the HTTP status code, or network or timeout when no response arrived.",
    unit: "",
    group: "api",
    source: "events",
  },
  {
    name: "pgcp_api_request_duration_seconds",
    type: "histogram",
    labels: ["route"],
    help: "Duration of API requests (each attempt) until the response was read or the transport failed.",
    unit: "seconds",
    group: "api",
    source: "events",
    buckets: REQUEST_DURATION_BUCKETS,
  },
  {
    name: "pgcp_api_retries_total",
    type: "counter",
    labels: ["route", "reason"],
    help: "Failed API requests that were repeated, by reason (http_<status>, network, timeout, invalid_response).",
    unit: "",
    group: "api",
    source: "events",
  },
  {
    name: "pgcp_api_anomalies_total",
    type: "counter",
    labels: ["project", "kind"],
    help: "Oddities in the operations log's answers, by kind: worked around, the poll goes on (duplicate_record, out_of_order_record, future_record, foreign_project, label_overflow, error_truncated), or refused, the poll fails (cursor_revisited, cursor_not_descending, page_without_cursor).",
    unit: "",
    group: "api",
    source: "events",
    level: "standard",
  },
  {
    name: "pgcp_api_rate_limit_waits_total",
    type: "counter",
    labels: ["route"],
    help: "Requests that queued at their account's rate limiter before they could be sent (all accounts).",
    unit: "",
    group: "api",
    source: "events",
  },
  {
    name: "pgcp_api_rate_limit_wait_seconds_total",
    type: "counter",
    labels: ["route"],
    help: "Time requests spent queued at their account's rate limiter (all accounts).",
    unit: "seconds",
    group: "api",
    source: "events",
  },
  {
    name: "pgcp_api_rate_limit_pauses_total",
    type: "counter",
    labels: ["route"],
    help: "429 responses that paused their account's rate limiter for every caller of that account, by the route that received them.",
    unit: "",
    group: "api",
    source: "events",
  },
  {
    name: "pgcp_api_rate_limit_pause_seconds_total",
    type: "counter",
    labels: ["route"],
    help: "Time the accounts' rate limiters were paused after 429 responses (summed over the accounts).",
    unit: "seconds",
    group: "api",
    source: "events",
  },
  {
    name: "pgcp_api_rate_limit_tokens",
    type: "gauge",
    labels: ["account"],
    help: "Requests an account's rate limiter's token bucket would let through at once now.",
    unit: "",
    group: "api",
    source: "runtime",
  },
  // Alerts: the outbox is committed state; deliveries are counted as they happen.
  {
    name: "pgcp_alerts_pending",
    type: "gauge",
    labels: ["sink"],
    help: "Alerts in the durable outbox that the sink has not acknowledged yet.",
    unit: "",
    group: "alerts",
    source: "state",
  },
  {
    name: "pgcp_alerts_oldest_pending_timestamp_seconds",
    type: "gauge",
    labels: ["sink"],
    help: "When the oldest alert still pending for the sink was raised (its age is time() minus this).",
    unit: "seconds",
    group: "alerts",
    source: "state",
  },
  {
    name: "pgcp_alerts_dead_letters",
    type: "gauge",
    labels: ["sink"],
    help: "Dead-lettered alerts kept in the committed state (the most recent per project).",
    unit: "",
    group: "alerts",
    source: "state",
  },
  {
    name: "pgcp_alerts_firing",
    type: "gauge",
    labels: ["sink"],
    help: "Alerts a sink keeps firing and re-sends every interval until they end (Alertmanager sinks).",
    unit: "",
    group: "alerts",
    source: "state",
  },
  {
    name: "pgcp_alerts_delivered_total",
    type: "counter",
    labels: ["sink"],
    help: "Alerts a sink acknowledged with a 2xx.",
    unit: "",
    group: "alerts",
    source: "events",
  },
  {
    name: "pgcp_alert_delivery_failures_total",
    type: "counter",
    labels: ["sink", "reason"],
    help: "Failed delivery attempts, by reason (client_error, server_error, rate_limited, timeout, network); each attempt carries one message.",
    unit: "",
    group: "alerts",
    source: "events",
  },
  {
    name: "pgcp_alerts_dead_lettered_total",
    type: "counter",
    labels: ["sink", "reason"],
    help: "Alerts given up on: refused for good by the sink, or older than its maximum age (reason max_age).",
    unit: "",
    group: "alerts",
    source: "events",
  },
  {
    name: "pgcp_alerts_dropped_total",
    type: "counter",
    labels: ["project"],
    help: "New alerts dropped because the project's outbox was full (alerts.outboxLimit).",
    unit: "",
    group: "alerts",
    source: "events",
  },
  {
    name: "pgcp_alerts_silenced_total",
    type: "counter",
    labels: ["kind", "sink"],
    help: "Alerts not sent to a sink because a silence covering it was open (counted per alert and sink).",
    unit: "",
    group: "alerts",
    source: "events",
  },
  {
    name: "pgcp_alert_delivery_latency_seconds",
    type: "histogram",
    labels: ["sink"],
    help: "Time from the detection of a transition to the sink's 2xx for its alert.",
    unit: "seconds",
    group: "alerts",
    source: "events",
    buckets: DELIVERY_LATENCY_BUCKETS,
  },
] as const satisfies readonly MetricSpec[];

type Entry = (typeof CATALOGUE)[number];

export type MetricName = Entry["name"];

/** The catalogue entry named `N`. */
export type SpecOf<N extends MetricName> = Extract<Entry, { name: N }>;

/** Families whose values are computed from what the module knows when a rendering is built. */
export type ProjectedName = Exclude<Entry, { source: "events" }>["name"];

/** Families that count events as they happen. */
export type EventCounterName = Extract<Entry, { source: "events"; type: "counter" }>["name"];
export type EventHistogramName = Extract<Entry, { source: "events"; type: "histogram" }>["name"];

/**
 * prom-client's default process metrics that are left out, and why: the `_total` ones are
 * gauges, which `promtool check metrics` rejects; the others carry a label named `type`.
 * Between them they only count open handles, requests and resources.
 */
export const OMITTED_PROCESS_METRICS: readonly { readonly name: string; readonly why: string }[] = [
  { name: "nodejs_active_handles_total", why: "a gauge whose name ends in `_total`" },
  { name: "nodejs_active_requests_total", why: "a gauge whose name ends in `_total`" },
  { name: "nodejs_active_resources_total", why: "a gauge whose name ends in `_total`" },
  { name: "nodejs_active_handles", why: "a label named `type`" },
  { name: "nodejs_active_requests", why: "a label named `type`" },
  { name: "nodejs_active_resources", why: "a label named `type`" },
];
