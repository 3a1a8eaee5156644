/**
 * Project lease families (Postgres state store): what this replica holds, its id, the live
 * replicas, its share and the fleet's total, the projects no live replica holds, read from the
 * lease manager when a rendering is built (no series without one, as with the file store), and
 * its claims, releases, losses and failures counted from the lease manager's reports.
 */
import type { Family } from "./family.js";

export const LEASE_FAMILIES = [
  {
    name: "pgcp_lease_held",
    type: "gauge",
    labels: ["project"],
    help: "1 for each project whose lease this replica holds (Postgres state store); only the holder polls a project and exports its series.",
    unit: "",
    group: "exporter",
    source: "runtime",
    level: "standard",
    *value({ runtime }) {
      const leases = runtime.leases?.();
      if (leases === undefined) return;
      for (const project of leases.heldProjects()) yield { labels: { project }, value: 1 };
    },
  },
  {
    name: "pgcp_lease_replicas",
    type: "gauge",
    labels: [],
    help: "Live replicas sharing the projects (a heartbeat within one lease duration), as counted at this replica's latest heartbeat.",
    unit: "",
    group: "exporter",
    source: "runtime",
    *value({ runtime }) {
      const live = runtime.leases?.()?.liveReplicas;
      if (live !== undefined) yield { labels: {}, value: live };
    },
  },
  {
    name: "pgcp_lease_target_projects",
    type: "gauge",
    labels: [],
    help: "Projects this replica aims to hold: its even share of the watched projects over the live replicas.",
    unit: "",
    group: "exporter",
    source: "runtime",
    *value({ runtime }) {
      const target = runtime.leases?.()?.targetProjects;
      if (target !== undefined) yield { labels: {}, value: target };
    },
  },
  {
    name: "pgcp_lease_fleet_projects",
    type: "gauge",
    labels: [],
    help: "Projects the live replicas share (the fleet's total, every replica watches the same list), as counted at this replica's latest heartbeat.",
    unit: "",
    group: "exporter",
    source: "runtime",
    *value({ runtime }) {
      const fleet = runtime.leases?.()?.fleetProjects;
      if (fleet !== undefined) yield { labels: {}, value: fleet };
    },
  },
  {
    name: "pgcp_projects_unowned",
    type: "gauge",
    labels: [],
    help: "Projects the replicas share that had no live holder (lease free, or expired by the database's clock) at this replica's latest heartbeat, before its claims; every replica exports it: take the max.",
    unit: "",
    group: "exporter",
    source: "runtime",
    *value({ runtime }) {
      const unowned = runtime.leases?.()?.unownedProjects;
      if (unowned !== undefined) yield { labels: {}, value: unowned };
    },
  },
  {
    name: "pgcp_lease_replica_info",
    type: "gauge",
    labels: ["replica"],
    help: "1, with this replica's id in the lease tables and its logs (Postgres state store): to tell the replicas apart.",
    unit: "",
    group: "exporter",
    source: "runtime",
    *value({ runtime }) {
      const leases = runtime.leases?.();
      if (leases !== undefined) yield { labels: { replica: leases.replicaId }, value: 1 };
    },
  },
  {
    name: "pgcp_lease_heartbeat_timestamp_seconds",
    type: "gauge",
    labels: [],
    help: "Time of this replica's latest successful lease heartbeat (registration, renewals, claims).",
    unit: "seconds",
    group: "exporter",
    source: "runtime",
    *value({ runtime }) {
      const ms = runtime.leases?.()?.lastHeartbeatMs;
      if (ms !== undefined) yield { labels: {}, value: ms / 1000 };
    },
  },
  {
    name: "pgcp_lease_acquisitions_total",
    type: "counter",
    labels: [],
    help: "Project leases this replica claimed (each claim increases the project's fencing token).",
    unit: "",
    group: "exporter",
    source: "events",
  },
  {
    name: "pgcp_lease_releases_total",
    type: "counter",
    labels: ["reason"],
    help: "Project leases this replica gave up, by reason (rebalance, removed: no longer watched, shutdown).",
    unit: "",
    group: "exporter",
    source: "events",
  },
  {
    name: "pgcp_lease_losses_total",
    type: "counter",
    labels: ["reason"],
    help: "Project leases this replica lost, by reason (taken: another replica claimed it; expired: heartbeats failed past the lease; fenced: the store rejected a commit).",
    unit: "",
    group: "exporter",
    source: "events",
  },
  {
    name: "pgcp_lease_fenced_commits_total",
    type: "counter",
    labels: [],
    help: "State commits (polls and outbox acknowledgements) rejected because this replica no longer held the project's lease; nothing of them was written.",
    unit: "",
    group: "exporter",
    source: "events",
  },
  {
    name: "pgcp_lease_heartbeat_failures_total",
    type: "counter",
    labels: [],
    help: "Lease heartbeats that failed (the database could not be reached, or answered an error).",
    unit: "",
    group: "exporter",
    source: "events",
  },
] as const satisfies readonly Family[];
