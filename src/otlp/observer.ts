/**
 * What the OpenTelemetry export reports as it runs (the `pgcp_otlp_*` metrics hear it). It never
 * carries a URL, a header or a span's content.
 */
import type { ExportFailureReason } from "./wire/transport.js";

/** Why spans left the queue without reaching the collector. */
export type SpanGiveUpReason = "rejected" | "expired";

export interface OtlpObserver {
  /** The collector took `count` spans. */
  spansSent(count: number): void;
  /** `count` spans went to the span dead letters. */
  spansDeadLettered(count: number, reason: SpanGiveUpReason): void;
  /** An export of `signal` failed (its data stays queued, or waits for the next push). */
  exportFailed(signal: "traces" | "metrics", reason: ExportFailureReason): void;
  /** The metrics were pushed. */
  metricsPushed(): void;
}

/** Hears nothing. */
export const SILENT_OTLP_OBSERVER: OtlpObserver = {
  spansSent: () => undefined,
  spansDeadLettered: () => undefined,
  exportFailed: () => undefined,
  metricsPushed: () => undefined,
};
