/**
 * OpenTelemetry: the operations read and the platform incidents as spans, and the metrics over
 * OTLP (docs/opentelemetry.md). `ids.ts` derives every span's ids from what it is about (and
 * reads W3C trace context); `span-hook.ts` turns the attempts a poll saw end into span records,
 * and `final-attempt.ts` an operation's final record into its last attempt's; `span-export.ts`
 * drains the projects' span queues to the collector; `observer.ts` is what the `pgcp_otlp_*`
 * metrics hear; `outage-log.ts` logs a collector's outage once, and `redaction.ts` clears what a
 * collector says of the target's secrets.
 *
 * What loads OpenTelemetry's packages is in `wire/` (the span mapping, the OTLP exporters, the
 * metrics push), loaded by `loadWire` only when an export is on; its types are exported here.
 */
export * from "./ids.js";
export * from "./observer.js";
export * from "./span-hook.js";
export * from "./span-export.js";
export * from "./final-attempt.js";
export * from "./outage-log.js";
export * from "./redaction.js";
export * from "./load-wire.js";
export type * from "./wire/index.js";
