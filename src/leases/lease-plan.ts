/**
 * The lease manager's decisions at each heartbeat, as pure functions: this replica's even share
 * of the projects among the live replicas, which of the leases it holds to give up (no longer
 * watched, or above its share) and how many free or expired leases to claim.
 */

/** Why a heartbeat gives a held project up: above the share, or no longer watched. */
export type PlannedReleaseReason = "rebalance" | "removed";

/** A lease held after renewal, with when it was claimed (on any one clock). */
export interface HeldForPlan {
  readonly projectId: string;
  readonly acquiredAt: number;
}

export interface LeasePlanInput<L extends HeldForPlan> {
  readonly replicaId: string;
  /** The leases this replica still holds after renewing them (not those being given up). */
  readonly held: readonly L[];
  /** The projects to share (every replica is given the same list). */
  readonly candidates: readonly string[];
  /** The replicas with a live heartbeat, in any order; this one may be missing. */
  readonly live: readonly string[];
}

export interface LeasePlan<L extends HeldForPlan> {
  /** The live replicas in id order, this one included. */
  readonly live: readonly string[];
  /** This replica's share of the candidates. */
  readonly target: number;
  /** The held leases to give up: those no longer watched, then those above the share. */
  readonly releases: readonly { readonly lease: L; readonly reason: PlannedReleaseReason }[];
  /** How many free or expired leases of the candidates to claim (0: none). */
  readonly claim: number;
}

/** `floor(n / live)`, plus one for the first `n mod live` replicas in id order. */
export function fairShare(projects: number, live: readonly string[], replicaId: string): number {
  const replicas = Math.max(1, live.length);
  const rank = Math.max(0, live.indexOf(replicaId));
  return Math.floor(projects / replicas) + (rank < projects % replicas ? 1 : 0);
}

/**
 * One heartbeat's plan. This replica counts among the live ones even before its own heartbeat
 * shows, so that the shares of the replicas add up to exactly the number of candidates. It
 * gives up what is no longer watched, then what lies above its share, the most recently
 * claimed first (they have the least history here), and claims what its share still lacks.
 */
export function planLeases<L extends HeldForPlan>(input: LeasePlanInput<L>): LeasePlan<L> {
  const { replicaId, candidates } = input;
  const live = [...new Set([...input.live, replicaId])].sort((a, b) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  const target = fairShare(candidates.length, live, replicaId);
  const wanted = new Set(candidates);
  const releases: { lease: L; reason: PlannedReleaseReason }[] = [];
  const kept: L[] = [];
  for (const lease of input.held) {
    if (wanted.has(lease.projectId)) kept.push(lease);
    else releases.push({ lease, reason: "removed" });
  }
  const excess = kept.length - target;
  if (excess > 0) {
    const newest = [...kept]
      .sort((a, b) => b.acquiredAt - a.acquiredAt || (a.projectId < b.projectId ? 1 : -1))
      .slice(0, excess);
    for (const lease of newest) releases.push({ lease, reason: "rebalance" });
  }
  return { live, target, releases, claim: Math.max(0, target - kept.length) };
}
