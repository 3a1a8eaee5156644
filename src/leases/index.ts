/**
 * Project leases for several replicas sharing one Postgres state store: the lease manager
 * (claims, renewals, an even split, handover) and the fenced per-project store view.
 */
export {
  LeaseManager,
  defaultReplicaId,
  fairShare,
  type Lease,
  type LeaseManagerOptions,
  type LeaseObserver,
  type LossReason,
  type ReleaseReason,
} from "./lease-manager.js";
export { LeasedStateStore } from "./leased-store.js";
