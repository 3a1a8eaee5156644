/**
 * Lease families counted from the lease manager's reports; a heartbeat that counted something
 * new (live replicas, shares, unowned projects) rebuilds the rendering.
 */
import type { LeaseObserver } from "../../leases/index.js";
import type { EventFamilies } from "./registry.js";

/** An observer that counts into `families`, then calls `changed`. */
export function leaseCounters(
  families: EventFamilies,
  changed: () => void,
): Required<LeaseObserver> {
  const acquisitions = families.counter("pgcp_lease_acquisitions_total");
  const releases = families.counter("pgcp_lease_releases_total");
  const losses = families.counter("pgcp_lease_losses_total");
  const fenced = families.counter("pgcp_lease_fenced_commits_total");
  const heartbeatFailures = families.counter("pgcp_lease_heartbeat_failures_total");
  return {
    acquired() {
      acquisitions?.inc();
      changed();
    },
    released(_projectId, reason) {
      releases?.inc({ reason });
      changed();
    },
    lost(_projectId, reason) {
      losses?.inc({ reason });
      changed();
    },
    commitFenced() {
      fenced?.inc();
      changed();
    },
    heartbeatFailed() {
      heartbeatFailures?.inc();
      changed();
    },
    standingChanged() {
      changed();
    },
  };
}
