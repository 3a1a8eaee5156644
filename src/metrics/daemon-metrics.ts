/**
 * The daemon's reports, applied to the metrics: project facts go to the project views (from
 * which the projected families are computed), poll, commit and discovery events to their
 * counters and histograms.
 */
import type { DaemonObserver } from "../sync/index.js";
import { WalkError } from "../sync/index.js";
import type { EventFamilies } from "./families.js";
import type { ProjectViews } from "./project-views.js";

/** An observer that updates `views` and `families`, then calls `changed`. */
export function daemonObserver(
  views: ProjectViews,
  families: EventFamilies,
  changed: () => void,
): Required<DaemonObserver> {
  const pollDurations = families.histogram("pgcp_poll_duration_seconds");
  const commits = families.counter("pgcp_state_commits_total");
  const listings = families.counter("pgcp_endpoint_listings_total");
  const discoveryFailures = families.counter("pgcp_discovery_failures_total");
  const alertsDropped = families.counter("pgcp_alerts_dropped_total");
  const anomalies = families.counter("pgcp_api_anomalies_total");
  return {
    projectsChanged(projectIds) {
      views.watch(projectIds);
      changed();
    },
    stateLoaded(projectId, state) {
      views.loaded(projectId, state);
      changed();
    },
    committed(projectId, result, durationSeconds) {
      views.committed(projectId, result.state);
      for (const { kind, count } of result.anomalies) {
        anomalies?.inc({ project: projectId, kind }, count);
      }
      pollDurations?.observe({ result: "success" }, durationSeconds);
      commits?.inc({ result: "success" });
      changed();
    },
    outboxChanged(projectId, state) {
      views.stateChanged(projectId, state);
      changed();
    },
    pollFailed(projectId, error, durationSeconds) {
      views.failed(projectId);
      if (error instanceof WalkError) anomalies?.inc({ project: projectId, kind: error.kind });
      pollDurations?.observe({ result: "failure" }, durationSeconds);
      changed();
    },
    commitFailed(projectId) {
      views.failed(projectId);
      commits?.inc({ result: "failure" });
      changed();
    },
    blocked(projectId, error) {
      views.blocked(projectId, error.problem);
      changed();
    },
    endpointsListed(projectId, endpoints) {
      views.listed(projectId, endpoints);
      listings?.inc({ result: "success" });
      changed();
    },
    endpointsFailed() {
      listings?.inc({ result: "failure" });
      changed();
    },
    discoveryFailed() {
      discoveryFailures?.inc();
      changed();
    },
    alertsDropped(projectId, count) {
      alertsDropped?.inc({ project: projectId }, count);
      changed();
    },
  };
}
