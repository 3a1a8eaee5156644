/**
 * Alert families: the outbox gauges, projected from each project's committed outbox, firing set
 * and dead letters (what is pending per sink, since when, what fires, what was given up on),
 * and the deliveries, failures, drops and silences counted as they happen.
 */
import { addCarried, type CarriedIncident } from "../../store/index.js";
import { committed } from "../../sync/index.js";
import type { Family } from "./family.js";
import { PAUSE } from "./series.js";

const DELIVERY_LATENCY_BUCKETS: readonly number[] = [
  1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 21_600, 86_400,
];

export const ALERT_FAMILIES = [
  {
    name: "pgcp_alerts_pending",
    type: "gauge",
    labels: ["sink"],
    help: "Alerts in the durable outbox that the sink has not acknowledged yet.",
    unit: "",
    group: "alerts",
    source: "state",
    *value({ projects }) {
      const pending = new Map<string, number>();
      for (const { state } of committed(projects)) {
        yield PAUSE;
        for (const entry of state.outbox) {
          for (const sink of entry.pending) pending.set(sink, (pending.get(sink) ?? 0) + 1);
        }
      }
      for (const [sink, value] of pending) yield { labels: { sink }, value };
    },
  },
  {
    name: "pgcp_alerts_oldest_pending_timestamp_seconds",
    type: "gauge",
    labels: ["sink"],
    help: "When the oldest alert still pending for the sink was raised (its age is time() minus this).",
    unit: "seconds",
    group: "alerts",
    source: "state",
    *value({ projects }) {
      const oldest = new Map<string, number>();
      for (const { state } of committed(projects)) {
        yield PAUSE;
        for (const entry of state.outbox) {
          for (const sink of entry.pending) {
            oldest.set(sink, Math.min(oldest.get(sink) ?? Infinity, entry.createdAtMs));
          }
        }
      }
      for (const [sink, ms] of oldest) yield { labels: { sink }, value: ms / 1000 };
    },
  },
  {
    name: "pgcp_alerts_dead_letters",
    type: "gauge",
    labels: ["sink"],
    help: "Dead-lettered alerts kept in the committed state (the most recent per project).",
    unit: "",
    group: "alerts",
    source: "state",
    *value({ projects }) {
      const dead = new Map<string, number>();
      for (const { state } of committed(projects)) {
        yield PAUSE;
        for (const letter of state.deadLetters)
          dead.set(letter.sink, (dead.get(letter.sink) ?? 0) + 1);
      }
      for (const [sink, value] of dead) yield { labels: { sink }, value };
    },
  },
  {
    name: "pgcp_alerts_firing",
    type: "gauge",
    labels: ["sink"],
    help: "Alerts a sink keeps firing and re-sends every interval until they end (Alertmanager sinks).",
    unit: "",
    group: "alerts",
    source: "state",
    *value({ projects }) {
      const firing = new Map<string, number>();
      for (const { state } of committed(projects)) {
        yield PAUSE;
        for (const f of state.firing ?? []) {
          if (f.endedAtMs === undefined) firing.set(f.sink, (firing.get(f.sink) ?? 0) + 1);
        }
      }
      for (const [sink, value] of firing) yield { labels: { sink }, value };
    },
  },
  {
    name: "pgcp_incidents_active",
    type: "gauge",
    labels: ["action", "region_id", "error_class"],
    help: "Platform incidents open now: failures of one action in one region with one error class across many projects (incidents.minProjects within incidents.window).",
    unit: "",
    group: "alerts",
    source: "state",
    *value({ projects }) {
      const carried = new Map<string, CarriedIncident>();
      for (const { state } of committed(projects)) {
        yield PAUSE;
        addCarried(carried, state.incidents);
      }
      const open = new Map<string, { labels: Record<string, string>; value: number }>();
      for (const incident of carried.values()) {
        const labels = {
          action: incident.action,
          region_id: incident.regionId,
          error_class: incident.errorClass,
        };
        const key = JSON.stringify(labels);
        const seen = open.get(key);
        if (seen === undefined) open.set(key, { labels, value: 1 });
        else seen.value += 1;
      }
      yield* open.values();
    },
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
    help: "Alerts not sent to a sink because a silence covering it was open, or because they make up a platform incident the sink is sent instead (counted per alert and sink).",
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
] as const satisfies readonly Family[];
