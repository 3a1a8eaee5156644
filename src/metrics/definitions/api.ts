/**
 * Control-plane API families: requests, durations, retries, anomalies and rate-limiter waits
 * and pauses counted from the API client's and the daemon's events (every attempt counts), and
 * each account's rate-limiter tokens, read when a rendering is built.
 */
import type { Family } from "./family.js";

const REQUEST_DURATION_BUCKETS: readonly number[] = [
  0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

export const API_FAMILIES = [
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
    *value({ runtime }) {
      for (const { name, client } of runtime.accounts?.() ?? []) {
        yield { labels: { account: name }, value: client.limiterStats().tokensRemaining };
      }
    },
  },
] as const satisfies readonly Family[];
