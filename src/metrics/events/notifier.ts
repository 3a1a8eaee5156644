/** Notifier families, counted from the notifier's reports. */
import type { NotifierObserver } from "../../alerts/pipeline/notifier.js";
import type { EventFamilies } from "./registry.js";

/** An observer that counts into `families`, then calls `changed`. */
export function notifierCounters(
  families: EventFamilies,
  changed: () => void,
): Required<NotifierObserver> {
  const delivered = families.counter("pgcp_alerts_delivered_total");
  const failures = families.counter("pgcp_alert_delivery_failures_total");
  const deadLettered = families.counter("pgcp_alerts_dead_lettered_total");
  const latency = families.histogram("pgcp_alert_delivery_latency_seconds");
  return {
    delivered(sink, alerts, latencySeconds) {
      delivered?.inc({ sink }, alerts.length);
      for (const seconds of latencySeconds) latency?.observe({ sink }, seconds);
      changed();
    },
    deliveryFailed(sink, reason) {
      failures?.inc({ sink, reason });
      changed();
    },
    deadLettered(sink, alerts, reason) {
      deadLettered?.inc({ sink, reason }, alerts.length);
      changed();
    },
  };
}
