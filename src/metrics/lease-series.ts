/**
 * Lease families read from the lease manager when a rendering is built: the projects this
 * replica holds, the live replicas, its share and its latest heartbeat. With the file store
 * there is no lease manager, and these families have no series.
 */
import type { Projections } from "./projected-family.js";

export const leaseProjections = {
  *pgcp_lease_held({ runtime }) {
    const leases = runtime.leases?.();
    if (leases === undefined) return;
    for (const project of leases.heldProjects()) yield { labels: { project }, value: 1 };
  },

  *pgcp_lease_replicas({ runtime }) {
    const live = runtime.leases?.()?.liveReplicas;
    if (live !== undefined) yield { labels: {}, value: live };
  },

  *pgcp_lease_target_projects({ runtime }) {
    const target = runtime.leases?.()?.targetProjects;
    if (target !== undefined) yield { labels: {}, value: target };
  },

  *pgcp_lease_heartbeat_timestamp_seconds({ runtime }) {
    const ms = runtime.leases?.()?.lastHeartbeatMs;
    if (ms !== undefined) yield { labels: {}, value: ms / 1000 };
  },
} satisfies Partial<Projections>;
