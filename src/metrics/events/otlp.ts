/** OpenTelemetry export families, counted from the export's reports. */
import type { OtlpObserver } from "../../otlp/index.js";
import type { EventFamilies } from "./registry.js";

/** An observer that counts into `families`, then calls `changed`. */
export function otlpCounters(families: EventFamilies, changed: () => void): OtlpObserver {
  const sent = families.counter("pgcp_otlp_spans_sent_total");
  const deadLettered = families.counter("pgcp_otlp_spans_dead_lettered_total");
  const failures = families.counter("pgcp_otlp_export_failures_total");
  const pushes = families.counter("pgcp_otlp_metric_pushes_total");
  return {
    spansSent(count) {
      sent?.inc(count);
      changed();
    },
    spansDeadLettered(count, reason) {
      deadLettered?.inc({ reason }, count);
      changed();
    },
    exportFailed(signal, reason) {
      failures?.inc({ signal, reason });
      changed();
    },
    metricsPushed() {
      pushes?.inc();
      changed();
    },
  };
}
