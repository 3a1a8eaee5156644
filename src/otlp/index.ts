/**
 * OpenTelemetry: the operations read and the platform incidents as spans, and the metrics over
 * OTLP (docs/opentelemetry.md). `ids.ts` derives every span's ids from what it is about (and
 * reads W3C trace context); `span-data.ts` maps a span record to OpenTelemetry's span;
 * `transport.ts` builds the OTLP/HTTP exporters of OpenTelemetry's packages and classifies their
 * failures; `observer.ts` is what the `pgcp_otlp_*` metrics hear. `span-hook.ts` turns the
 * attempts a poll saw end into span records, and `span-export.ts` drains the projects' span
 * queues to the collector. `final-attempt.ts` makes the span record of an operation's last
 * attempt from its record alone, and `send-once.ts` sends spans once, bounded, for a command
 * that exits after (`wait`). `metric-families.ts` maps the families `/metrics` serves to
 * OpenTelemetry's metric data, `metrics-push.ts` pushes them every interval with OpenTelemetry's
 * SDK, and `outage-log.ts` logs its failing pushes once per outage.
 */
export * from "./ids.js";
export * from "./span-data.js";
export * from "./transport.js";
export * from "./observer.js";
export * from "./span-hook.js";
export * from "./span-export.js";
export * from "./final-attempt.js";
export * from "./send-once.js";
export * from "./metric-families.js";
export * from "./metrics-push.js";
export * from "./outage-log.js";
