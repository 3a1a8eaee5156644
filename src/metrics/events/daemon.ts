/**
 * The daemon's reports, applied to the metrics: poll, commit and discovery events to their
 * counters and histograms. Project facts are the shared project views' (`sync/project-views.ts`),
 * which hear the same reports first; every report makes the rendering stale.
 */
import type { DaemonObserver } from "../../sync/index.js";
import { PROBE_FAILURE_REASONS, WalkError } from "../../sync/index.js";
import type { EventFamilies } from "./registry.js";

/** An observer that updates `families`, then calls `changed`. */
export function daemonObserver(
  families: EventFamilies,
  changed: () => void,
  accounts: readonly string[] = [],
): Required<DaemonObserver> {
  const pollDurations = families.histogram("pgcp_poll_duration_seconds");
  const commits = families.counter("pgcp_state_commits_total");
  const listings = families.counter("pgcp_endpoint_listings_total");
  const discoveryFailures = families.counter("pgcp_discovery_failures_total");
  const alertsDropped = families.counter("pgcp_alerts_dropped_total");
  const spansDropped = families.counter("pgcp_otlp_spans_dropped_total");
  const alertsSilenced = families.counter("pgcp_alerts_silenced_total");
  const anomalies = families.counter("pgcp_api_anomalies_total");
  const probes = families.counter("pgcp_compute_probes_total");
  const probeFailures = families.counter("pgcp_compute_probe_failures_total");
  let probesSeen = false;
  // Each account's series from the start, so that a first failure is an increase from 0.
  for (const account of accounts) discoveryFailures?.inc({ account }, 0);
  return {
    projectsChanged() {
      changed();
    },
    stateLoaded() {
      changed();
    },
    committed(projectId, result, durationSeconds) {
      for (const { kind, count } of result.anomalies) {
        anomalies?.inc({ project: projectId, kind }, count);
      }
      for (const { alert, sink } of result.silenced) {
        alertsSilenced?.inc({ kind: alert.kind, sink });
      }
      pollDurations?.observe({ result: "success" }, durationSeconds);
      commits?.inc({ result: "success" });
      changed();
    },
    outboxChanged() {
      changed();
    },
    pollFailed(projectId, error, durationSeconds) {
      if (error instanceof WalkError) anomalies?.inc({ project: projectId, kind: error.kind });
      pollDurations?.observe({ result: "failure" }, durationSeconds);
      changed();
    },
    commitFailed() {
      commits?.inc({ result: "failure" });
      changed();
    },
    blocked() {
      changed();
    },
    endpointsListed() {
      listings?.inc({ result: "success" });
      changed();
    },
    endpointsFailed() {
      listings?.inc({ result: "failure" });
      changed();
    },
    projectDescribed() {
      changed();
    },
    branchesListed() {
      changed();
    },
    discoveryFailed(_error, account) {
      discoveryFailures?.inc({ account });
      changed();
    },
    alertsDropped(projectId, count) {
      alertsDropped?.inc({ project: projectId }, count);
      changed();
    },
    spansDropped(_projectId, count) {
      spansDropped?.inc(count);
      changed();
    },
    computeChanged(_projectId, _compute, probe) {
      // Every series from the first compute the probe knows (before its first probe), so that
      // a first failure is an increase from 0.
      if (!probesSeen) {
        probesSeen = true;
        for (const result of ["success", "failure"]) probes?.inc({ result }, 0);
        for (const reason of PROBE_FAILURE_REASONS) probeFailures?.inc({ reason }, 0);
      }
      if (probe !== undefined) {
        probes?.inc({ result: probe.ok ? "success" : "failure" });
        if (!probe.ok) probeFailures?.inc({ reason: probe.reason });
      }
      changed();
    },
    computeForgotten() {
      changed();
    },
  };
}
