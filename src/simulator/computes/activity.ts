import type { BackendRow } from "./catalog.js";
import { SIMULATOR_APPLICATION_NAME } from "./options.js";

/**
 * The activity monitor of a simulated compute, after the real compute's (compute_ctl): it
 * looks at the client backends of the compute's sessions in `pg_stat_activity` and reports
 *
 * - activity now, for as long as a backend is not `idle`: it runs a statement, or holds a
 *   transaction open (`idle in transaction` counts, so as not to break long transactions);
 * - activity at a backend's last state change otherwise: a new session, or a statement that
 *   ended. An idle session keeps nothing awake: the compute suspends `suspend_timeout`
 *   after the last thing its clients did, and the suspend closes the idle sessions.
 *
 * Sessions whose `application_name` is the simulator's own never count.
 */
export class ActivityMonitor {
  private seenPids = new Set<number>();
  private lastChangeMs = Number.NEGATIVE_INFINITY;
  private busyNow = false;

  /** A backend was not idle at the last look: activity until a look says otherwise. */
  get busy(): boolean {
    return this.busyNow;
  }

  /**
   * Takes one look at the compute's backends; true when it saw activity since the last look
   * (a busy backend, a new session, or a later state change).
   */
  observe(backends: readonly BackendRow[]): boolean {
    const clients = backends.filter((b) => b.applicationName !== SIMULATOR_APPLICATION_NAME);
    let active = false;
    const pids = new Set<number>();
    for (const backend of clients) {
      pids.add(backend.pid);
      if (!this.seenPids.has(backend.pid)) active = true;
      if (backend.state !== "idle") active = true;
      if (backend.stateChangeMs !== null && backend.stateChangeMs > this.lastChangeMs) {
        this.lastChangeMs = backend.stateChangeMs;
        active = true;
      }
    }
    this.busyNow = clients.some((b) => b.state !== "idle");
    this.seenPids = pids;
    return active;
  }

  /** The compute (re)started or stopped: nothing of its sessions is busy any more. */
  reset(): void {
    this.seenPids.clear();
    this.busyNow = false;
  }
}
