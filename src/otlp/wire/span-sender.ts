/**
 * What the span export sends with: span records as OpenTelemetry's spans (`span-data.ts`) under
 * one resource, through the OTLP exporter of the target (`transport.ts`).
 */
import { resourceFromAttributes, type Resource } from "@opentelemetry/resources";
import type { OtlpTarget } from "../../config/index.js";
import type { SpanRecord } from "../../store/index.js";
import { PACKAGE } from "../../version.js";
import { readableSpan } from "./span-data.js";
import { exportOnce, traceExporter, type ExportOutcome } from "./transport.js";

export interface SpanSender {
  /** One export request of `records`; never rejects. */
  send(records: readonly SpanRecord[]): Promise<ExportOutcome>;
  /** Waits for a request in flight, then closes the exporter. */
  shutdown(): Promise<void>;
}

/** A sender to `target`, its spans under a resource of `attributes` and the version. */
export function spanSender(
  target: OtlpTarget,
  attributes: Readonly<Record<string, string>>,
): SpanSender {
  const exporter = traceExporter(target);
  const resource = spanResource(attributes);
  return {
    send: (records) =>
      exportOnce(
        exporter,
        records.map((record) => readableSpan(record, resource)),
      ),
    shutdown: () => exporter.shutdown().catch(() => undefined),
  };
}

/** The resource spans are sent under: `attributes` (`service.name` among them) and the version. */
export function spanResource(attributes: Readonly<Record<string, string>>): Resource {
  return resourceFromAttributes({ "service.version": PACKAGE.version, ...attributes });
}
