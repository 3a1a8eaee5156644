/**
 * The daemon's accounts and lease manager, for what is built before the daemon and reads them
 * at each rendering (the metrics, the status page): `createDaemon` fills it, once.
 */
import type { LeaseManager } from "../leases/index.js";
import type { DaemonAccount } from "./account-runner.js";

export class DaemonRegistry {
  #filled:
    { readonly accounts: readonly DaemonAccount[]; readonly leases?: LeaseManager } | undefined;

  /** The accounts in the configuration's order; none before the daemon is built. */
  get accounts(): readonly DaemonAccount[] {
    return this.#filled?.accounts ?? [];
  }

  /** The lease manager (Postgres state store only); none before the daemon is built. */
  get leases(): LeaseManager | undefined {
    return this.#filled?.leases;
  }

  /** Called by `createDaemon` with what it built. */
  fill(accounts: readonly DaemonAccount[], leases: LeaseManager | undefined): void {
    if (this.#filled !== undefined) throw new Error("the daemon registry is filled once");
    this.#filled = { accounts, ...(leases === undefined ? {} : { leases }) };
  }
}
