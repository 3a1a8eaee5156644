/**
 * OpenTelemetry: the operations read and the platform incidents as spans, and the metrics over
 * OTLP (docs/opentelemetry.md). `ids.ts` derives every span's ids from what it is about (and
 * reads W3C trace context); `span-data.ts` maps a span record to OpenTelemetry's span;
 * `transport.ts` builds the OTLP/HTTP exporters of OpenTelemetry's packages and classifies their
 * failures; `observer.ts` is what the `pgcp_otlp_*` metrics hear. `metric-families.ts` maps the
 * families `/metrics` serves to OpenTelemetry's metric data, and `metrics-push.ts` pushes them
 * every interval with OpenTelemetry's SDK; `outage-log.ts` logs a signal's failing exports once
 * per outage.
 */
export * from "./ids.js";
export * from "./span-data.js";
export * from "./transport.js";
export * from "./observer.js";
export * from "./metric-families.js";
export * from "./metrics-push.js";
export * from "./outage-log.js";
