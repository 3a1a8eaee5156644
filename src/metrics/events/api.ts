/** API request families, counted from the API client's event hooks. */
import type { ApiClientEvents } from "../../api/index.js";
import type { EventFamilies } from "./registry.js";

/** Hooks that count into `families`, then call `changed`. */
export function apiEventCounters(families: EventFamilies, changed: () => void): ApiClientEvents {
  const requests = families.counter("pgcp_api_requests_total");
  const durations = families.histogram("pgcp_api_request_duration_seconds");
  const retries = families.counter("pgcp_api_retries_total");
  const waits = families.counter("pgcp_api_rate_limit_waits_total");
  const waitSeconds = families.counter("pgcp_api_rate_limit_wait_seconds_total");
  const pauses = families.counter("pgcp_api_rate_limit_pauses_total");
  const pauseSeconds = families.counter("pgcp_api_rate_limit_pause_seconds_total");
  return {
    onResponse({ route, status, durationMs }) {
      requests?.inc({ route, code: String(status) });
      durations?.observe({ route }, durationMs / 1000);
      changed();
    },
    onTransportError({ route, kind, durationMs }) {
      // No status code: the kind (network, timeout) takes its place, a bounded set of values.
      requests?.inc({ route, code: kind });
      durations?.observe({ route }, durationMs / 1000);
      changed();
    },
    onRetry({ route, reason }) {
      retries?.inc({ route, reason });
      changed();
    },
    onRateLimitWait({ route, waitedMs }) {
      waits?.inc({ route });
      waitSeconds?.inc({ route }, waitedMs / 1000);
      changed();
    },
    onRateLimitPause({ route, pauseMs }) {
      pauses?.inc({ route });
      pauseSeconds?.inc({ route }, pauseMs / 1000);
      changed();
    },
  };
}
