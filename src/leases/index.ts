/**
 * Project leases for several replicas sharing one Postgres state store: the lease manager
 * (heartbeats, claims, renewals, handover with a drain), the pure plan it follows at each
 * heartbeat (the even share, which held projects to give up and how many to claim), the
 * replica's id and the fenced per-project store view. The leases' statements are in
 * `store/lease-table.ts`.
 */
export {
  LeaseManager,
  type Lease,
  type LeaseAges,
  type LeaseHolder,
  type LeaseManagerOptions,
  type LeaseObserver,
  type LossReason,
  type ReleaseReason,
} from "./lease-manager.js";
export {
  fairShare,
  planLeases,
  type HeldForPlan,
  type LeasePlan,
  type LeasePlanInput,
  type PlannedReleaseReason,
} from "./lease-plan.js";
export { defaultReplicaId } from "./replica-id.js";
export { LeasedStateStore } from "./leased-store.js";
