/**
 * The OTLP/HTTP exporters of OpenTelemetry's packages, for a target's encoding
 * (`http/protobuf` or `http/json`), and what one export's outcome means for us. The packages
 * serialise, send, and retry within the export's timeout (429, 502, 503, 504 and dropped
 * connections, honouring `Retry-After`); what they still fail with is classified here, without
 * the target's URL or headers.
 */
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { OTLPMetricExporter as JsonMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPMetricExporter as ProtoMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import type { PushMetricExporter } from "@opentelemetry/sdk-metrics";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { OtlpTarget } from "../../config/index.js";

/** The exporter of spans to `target`. */
export function traceExporter(target: OtlpTarget): SpanExporter {
  const options = exporterOptions(target);
  return target.protocol === "http/json"
    ? new JsonTraceExporter(options)
    : new ProtoTraceExporter(options);
}

/** The exporter of metrics to `target`. */
export function metricExporter(target: OtlpTarget): PushMetricExporter {
  const options = exporterOptions(target);
  return target.protocol === "http/json"
    ? new JsonMetricExporter(options)
    : new ProtoMetricExporter(options);
}

function exporterOptions(target: OtlpTarget) {
  return {
    url: target.url,
    headers: { ...target.headers },
    timeoutMillis: target.timeoutMs,
    // One export in flight at a time is ours to keep; this only bounds a stray one.
    concurrencyLimit: 4,
  };
}

/** Why an export failed, as a bounded label. */
export type ExportFailureReason =
  /** The collector refused the data itself (400): sending it again cannot help. */
  | "rejected"
  /** The collector refused us (401, 403, 404, …): a setting to fix; the data waits. */
  | "refused"
  /** The request was too large (413): smaller batches are tried. */
  | "too_large"
  /** 429 or 5xx after the exporter's own retries. */
  | "unavailable"
  | "timeout"
  | "network";

export type ExportOutcome =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly reason: ExportFailureReason;
      /** For logs: the status and the collector's words, never the URL or headers. */
      readonly detail: string;
    };

/** What an exporter's result means for the data it carried. */
export function exportOutcome(result: ExportResult): ExportOutcome {
  if (result.code === ExportResultCode.SUCCESS) return { ok: true };
  const error = result.error as (Error & { code?: unknown; data?: unknown }) | undefined;
  const code = error?.code;
  if (typeof code === "number") {
    const said = typeof error?.data === "string" ? `: ${error.data.slice(0, 200)}` : "";
    const detail = `HTTP ${code}${said}`;
    if (code === 400) return { ok: false, reason: "rejected", detail };
    if (code === 413) return { ok: false, reason: "too_large", detail };
    if (code === 408 || code === 429 || code >= 500) {
      return { ok: false, reason: "unavailable", detail };
    }
    return { ok: false, reason: "refused", detail };
  }
  if (typeof code === "string") {
    return { ok: false, reason: "network", detail: `${code} (the collector could not be reached)` };
  }
  const message = error?.message ?? "unknown error";
  if (/timed? ?out/i.test(message)) return { ok: false, reason: "timeout", detail: message };
  if (/retryable/i.test(message)) {
    return { ok: false, reason: "unavailable", detail: "429 or 5xx after the exporter's retries" };
  }
  return { ok: false, reason: "network", detail: message.slice(0, 200) };
}

/** Exports once with `exporter` (callback to promise). */
export function exportOnce<T>(
  exporter: { export(items: T, done: (result: ExportResult) => void): void },
  items: T,
): Promise<ExportOutcome> {
  return new Promise((resolve) => {
    try {
      exporter.export(items, (result) => {
        resolve(exportOutcome(result));
      });
    } catch (error) {
      resolve(exportOutcome({ code: ExportResultCode.FAILED, error: error as Error }));
    }
  });
}
