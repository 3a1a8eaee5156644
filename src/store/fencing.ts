/**
 * Fencing: a commit to a shared store names the lease it is made under. The store writes only
 * while that lease is still the project's current one, and rejects the commit otherwise, so a
 * replica that lost a project (paused, partitioned, too slow) can never overwrite the work of
 * the replica that took it over.
 */

/** The lease a commit is made under: who holds the project, and the token of that claim. */
export interface CommitFence {
  /** The replica's id. */
  readonly holder: string;
  /** Increased by every new claim of the project; a stale claim carries a smaller one. */
  readonly token: number;
}

/**
 * Why a fenced commit was rejected:
 * - `taken`: another replica claimed the project since (its token is newer);
 * - `expired`: the lease ran out (by the database's clock) and was not renewed in time;
 * - `released`: this replica gave the project up (rebalancing or shutdown);
 * - `missing`: the project has no lease at all;
 * - `stale_state`: the lease is current, but the stored state moved on from the one this
 *   commit builds on (another writer committed): the replica must reload the project.
 */
export type LeaseLossReason = "taken" | "expired" | "released" | "missing" | "stale_state";

/**
 * A commit rejected by fencing. Nothing was written; the caller must stop working on the
 * project (drop it, and reload its state if it claims it again).
 */
export class LeaseLostError extends Error {
  override readonly name = "LeaseLostError";

  constructor(
    readonly projectId: string,
    readonly reason: LeaseLossReason,
    readonly fence: CommitFence | undefined,
    detail: string,
  ) {
    super(`commit of project ${projectId} rejected (${reason}): ${detail}`);
  }
}
