/**
 * This replica among those sharing the projects (Postgres state store), as the page shows it:
 * what it reads of the lease manager, and what it makes of that. Nothing with the file store.
 */

/**
 * What the lease manager tells of this replica among the others (Postgres state store);
 * `LeaseManager` satisfies it. The counts are those of its latest heartbeat.
 */
export interface ReplicaSource {
  readonly replicaId: string;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  heldProjects(): readonly string[];
  readonly liveReplicas: number | undefined;
  readonly targetProjects: number | undefined;
  readonly fleetProjects: number | undefined;
  readonly unownedProjects: number | undefined;
  /** Ages on the monotonic clock. */
  leaseAges(): {
    readonly sinceRenewalMs: number | undefined;
    readonly oldestHeldMs: number | undefined;
    readonly newestHeldMs: number | undefined;
  };
}

/**
 * This replica among those sharing the projects: its id, the live replicas, what it holds of
 * the fleet, the projects no live replica holds, and how old its leases are. Counts are
 * undefined before its first heartbeat; ages are on the monotonic clock.
 */
export interface ReplicaStatus {
  readonly id: string;
  /** Projects it holds now. */
  readonly held: number;
  /** Its even share of the fleet. */
  readonly target: number | undefined;
  /** Projects the replicas share: the fleet's total. */
  readonly fleet: number | undefined;
  /** Live replicas, this one included. */
  readonly live: number | undefined;
  /** Projects with no live holder, by the database's clock. */
  readonly unowned: number | undefined;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  /** Since its latest successful heartbeat, which renewed its leases. */
  readonly sinceRenewalMs: number | undefined;
  /** Since it claimed the oldest and the newest of the leases it holds. */
  readonly oldestHeldMs: number | undefined;
  readonly newestHeldMs: number | undefined;
}

export function replicaStatus(source: ReplicaSource | undefined): ReplicaStatus | undefined {
  if (source === undefined) return undefined;
  return {
    id: source.replicaId,
    held: source.heldProjects().length,
    target: source.targetProjects,
    fleet: source.fleetProjects,
    live: source.liveReplicas,
    unowned: source.unownedProjects,
    leaseMs: source.leaseMs,
    heartbeatMs: source.heartbeatMs,
    ...source.leaseAges(),
  };
}
