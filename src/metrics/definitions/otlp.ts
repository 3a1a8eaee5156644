/**
 * OpenTelemetry export families: the spans waiting in the committed span queues, and what the
 * export did with them (sent, given up on, dropped), its failed exports and the metric pushes,
 * counted as they happen. No family carries a URL or a header.
 */
import { committed } from "../../sync/index.js";
import type { Family } from "./family.js";
import { PAUSE } from "./series.js";

export const OTLP_FAMILIES = [
  {
    name: "pgcp_otlp_spans_queued",
    type: "gauge",
    labels: [],
    help: "Spans committed in the span queues that the OpenTelemetry collector has not taken yet.",
    unit: "",
    group: "otlp",
    source: "state",
    *value({ projects }) {
      let queued = 0;
      for (const { state } of committed(projects)) {
        yield PAUSE;
        queued += state.spans?.length ?? 0;
      }
      yield { labels: {}, value: queued };
    },
  },
  {
    name: "pgcp_otlp_spans_sent_total",
    type: "counter",
    labels: [],
    help: "Spans the OpenTelemetry collector took (a repeat after a crash counts again: it is the same span).",
    unit: "",
    group: "otlp",
    source: "events",
  },
  {
    name: "pgcp_otlp_spans_dead_lettered_total",
    type: "counter",
    labels: ["reason"],
    help: "Spans given up on: refused for good by the collector (rejected), or queued longer than otlp.traces.maxAge while it failed (expired).",
    unit: "",
    group: "otlp",
    source: "events",
  },
  {
    name: "pgcp_otlp_spans_dropped_total",
    type: "counter",
    labels: [],
    help: "New spans dropped because a project's span queue was full.",
    unit: "",
    group: "otlp",
    source: "events",
  },
  {
    name: "pgcp_otlp_export_failures_total",
    type: "counter",
    labels: ["signal", "reason"],
    help: "Failed OTLP exports by signal (traces, metrics) and reason (rejected, refused, too_large, unavailable, timeout, network), after the exporter's own retries.",
    unit: "",
    group: "otlp",
    source: "events",
  },
  {
    name: "pgcp_otlp_metric_pushes_total",
    type: "counter",
    labels: [],
    help: "Pushes of the metrics over OTLP that the collector took.",
    unit: "",
    group: "otlp",
    source: "events",
  },
] as const satisfies readonly Family[];
