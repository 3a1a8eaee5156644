/**
 * The exporter's own families: polls, commits, listings and discovery counted from the daemon's
 * events; each account's scheduler (whether its key is accepted, projects, intervals and
 * stretch), the configuration's last reload and the build, read when a rendering is built.
 */
import type { Tier } from "../../scheduler/activity-plan.js";
import type { Family } from "./family.js";

/** Each tier of the scheduler under its `lane` label value; a new tier fails to compile here. */
const LANES: Readonly<Record<Tier, string>> = { fast: "fast", active: "base", idle: "idle" };

const POLL_DURATION_BUCKETS: readonly number[] = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export const EXPORTER_FAMILIES = [
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
    *value({ runtime }) {
      for (const account of runtime.accounts?.() ?? []) {
        yield {
          labels: { account: account.name },
          value: account.keyRefusal() === undefined ? 1 : 0,
        };
      }
    },
  },
  {
    name: "pgcp_scheduler_projects",
    type: "gauge",
    labels: ["account"],
    help: "Projects an account's scheduler polls now (on this replica).",
    unit: "",
    group: "exporter",
    source: "runtime",
    *value({ runtime }) {
      for (const account of runtime.accounts?.() ?? []) {
        yield { labels: { account: account.name }, value: account.projects().length };
      }
    },
  },
  {
    name: "pgcp_scheduler_poll_interval_seconds",
    type: "gauge",
    labels: ["account", "lane"],
    help: "Interval at which an account's projects of a lane are polled now (fast: with open operations; base: one whose poll has just found an operation, busier ones down to poll.fastInterval; idle: none within poll.activeWindow, stretched first when the budget is short).",
    unit: "seconds",
    group: "exporter",
    source: "runtime",
    *value({ runtime }) {
      for (const { name, scheduler } of runtime.accounts?.() ?? []) {
        for (const [tier, lane] of Object.entries(LANES) as [Tier, string][]) {
          yield {
            labels: { account: name, lane },
            value: scheduler.tierIntervalSeconds(tier),
          };
        }
      }
    },
  },
  {
    name: "pgcp_scheduler_interval_stretch_ratio",
    type: "gauge",
    labels: ["account"],
    help: "Factor by which every poll interval of an account is stretched to keep its requests within its rate-limit budget; 1 when they fit.",
    unit: "ratio",
    group: "exporter",
    source: "runtime",
    *value({ runtime }) {
      for (const { name, scheduler } of runtime.accounts?.() ?? []) {
        yield { labels: { account: name }, value: scheduler.budget.stretch };
      }
    },
  },
  {
    name: "pgcp_config_last_reload_successful",
    type: "gauge",
    labels: [],
    help: "Whether the last reload of the configuration (SIGHUP) succeeded: 1, or 0 when the file was refused and the running configuration kept; 1 before any reload.",
    unit: "",
    group: "exporter",
    source: "runtime",
    *value({ runtime }) {
      const loads = runtime.configLoads?.();
      if (loads !== undefined) yield { labels: {}, value: loads.lastReloadSuccessful ? 1 : 0 };
    },
  },
  {
    name: "pgcp_config_last_reload_success_timestamp_seconds",
    type: "gauge",
    labels: [],
    help: "When the configuration was last loaded successfully: at start, or by the last successful reload (Unix seconds).",
    unit: "seconds",
    group: "exporter",
    source: "runtime",
    *value({ runtime }) {
      const loads = runtime.configLoads?.();
      if (loads !== undefined) yield { labels: {}, value: loads.lastSuccessMs / 1000 };
    },
  },
  {
    name: "pgcp_build_info",
    type: "gauge",
    labels: ["version", "revision", "node_version"],
    help: "Version of the exporter, the git commit it was built from (empty when unknown) and the version of Node.js; always 1.",
    unit: "",
    group: "exporter",
    source: "runtime",
    *value({ runtime }) {
      yield {
        labels: {
          version: runtime.version,
          revision: runtime.revision ?? "",
          node_version: process.versions.node,
        },
        value: 1,
      };
    },
  },
] as const satisfies readonly Family[];
