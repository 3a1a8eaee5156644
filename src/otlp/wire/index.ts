/**
 * The modules that load OpenTelemetry's packages (their exporters, SDK and serialisation), kept
 * apart so that they are loaded only when an export is on (`loadWire`, `../load-wire.ts`): span
 * records as OpenTelemetry's spans, the OTLP/HTTP exporters and what their failures mean, a
 * sender of spans for the span export and one for a command that sends once, and the metrics
 * push with the mapping of the families to OTLP metric data.
 */
export * from "./span-data.js";
export * from "./transport.js";
export * from "./span-sender.js";
export * from "./send-once.js";
export * from "./metric-families.js";
export * from "./metrics-push.js";
