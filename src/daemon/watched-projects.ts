/**
 * Which projects are watched, and under which account: of what the accounts list and discover,
 * each under the first account that has it, and this replica's share of them. It loads the
 * committed states of those that start, and tells the observers which projects to show.
 */
import type { Clock } from "../clock.js";
import type { LeaseManager } from "../leases/index.js";
import { errorFields, type Logger } from "../logger.js";
import type { Scheduler } from "../scheduler/index.js";
import type { DaemonObserver } from "../sync/index.js";
import { forEachBounded } from "./bounded.js";
import { Departures } from "./departures.js";
import { shareOf, type WantedProjects } from "./lease-share.js";
import { assignOwners, type AccountFinding } from "./project-owners.js";
import type { ProjectRoster, WatchTerms } from "./project-roster.js";

/** Committed states read at once at start-up (and when leases bring new projects). */
const LOAD_CONCURRENCY = 16;

export interface WatchInputs {
  readonly roster: ProjectRoster;
  /** Each account's scheduler, told the projects it polls. */
  readonly accounts: readonly { readonly name: string; readonly scheduler: Scheduler }[];
  readonly leases: LeaseManager | undefined;
  readonly notify: Required<DaemonObserver>;
  readonly logger: Logger;
  readonly clock: Clock;
  /** How long a project discovery no longer finds is still shown (seconds). */
  readonly graceSeconds: number;
}

export class WatchedProjects {
  readonly #inputs: WatchInputs;
  #graceSeconds: number;
  /** The account that watches each project (the first in the configuration that has it). */
  #owners: ReadonlyMap<string, string> = new Map();
  readonly #departures = new Departures();
  #departuresTimer: NodeJS.Timeout | undefined;
  /** Warned once per project and accounts: discovery repeats every interval. */
  readonly #sharedWarned = new Set<string>();

  constructor(inputs: WatchInputs) {
    this.#inputs = inputs;
    this.#graceSeconds = inputs.graceSeconds;
  }

  /** A reload's discovery grace, from the next time the shown projects change. */
  setGrace(seconds: number): void {
    this.#graceSeconds = seconds;
  }

  /**
   * The projects to watch, from what each account lists or discovered: each under the first
   * account that has it; all of them, or with leases, this replica's share of them. With
   * `departing`, a project no longer found stops being polled and lingers for the grace.
   */
  async set(findings: readonly AccountFinding[], departing: boolean): Promise<void> {
    const { roster, clock } = this.#inputs;
    const assigned = assignOwners(findings);
    for (const shared of assigned.shared) {
      const key = `${shared.projectId} ${shared.watchedBy} ${shared.alsoSeenBy.join(",")}`;
      if (this.#sharedWarned.has(key)) continue;
      this.#sharedWarned.add(key);
      this.#inputs.logger.warn(
        { project: shared.projectId, account: shared.watchedBy, alsoSeenBy: shared.alsoSeenBy },
        "a project is seen under several accounts; it is watched once, under the first",
      );
    }
    if (departing) {
      const gone = roster.ids().filter((id) => !assigned.owners.has(id));
      this.#departures.departed(gone, clock.monotonic());
    }
    this.#departures.returned(assigned.owners.keys());
    this.#owners = assigned.owners;
    // With leases, projects this replica held and no longer may stop now; new ones come with
    // the leases.
    await this.watch(shareOf(this.#inputs.leases, [...this.#owners.keys()]));
  }

  /**
   * Watches exactly the projects of `wanted`, each under its owning account and committing
   * under the lease token given (undefined: no leases), and loads the committed states of
   * those that are new.
   */
  async watch(wanted: WantedProjects): Promise<void> {
    const { roster, notify, logger: log } = this.#inputs;
    const terms = new Map<string, WatchTerms>();
    for (const [id, token] of wanted) {
      const account = this.#owners.get(id);
      if (account !== undefined) terms.set(id, { account, token });
    }
    const added = roster.watch(terms);
    // Reading the committed states a few at a time, not one by one: start-up with thousands
    // of projects waits on the disk (or the database), not on the CPU.
    await forEachBounded(added, LOAD_CONCURRENCY, async (sync) => {
      const id = sync.projectId;
      const status = await sync.load();
      if (status.kind === "ready" && status.state !== undefined) {
        notify.stateLoaded(id, status.state);
        if (status.bucketsReset === true) {
          log.warn(
            { project: id },
            "state file was written with other duration buckets; the histogram's buckets restart from zero (counts and sums are kept)",
          );
        }
      }
      if (status.kind === "blocked") {
        notify.blocked(id, status.error);
        log.error(
          { project: id, ...errorFields(status.error) },
          "project state file is unusable; move it aside to start this project afresh",
        );
      }
    });
    for (const account of this.#inputs.accounts) {
      account.scheduler.setProjects(roster.idsOf(account.name));
    }
    this.#publish();
  }

  /** Stops the timer of the lingering projects' grace. */
  stop(): void {
    if (this.#departuresTimer !== undefined) clearTimeout(this.#departuresTimer);
  }

  /**
   * Tells the observers which projects to show: the watched ones, and those discovery no longer
   * finds while their grace lasts; wakes up again when the next grace ends.
   */
  #publish(): void {
    const { roster, clock } = this.#inputs;
    const graceMs = this.#graceSeconds * 1000;
    const lingering = this.#departures.lingering(clock.monotonic(), graceMs);
    this.#inputs.notify.projectsChanged([...roster.ids(), ...lingering]);
    if (this.#departuresTimer !== undefined) clearTimeout(this.#departuresTimer);
    this.#departuresTimer = undefined;
    const next = this.#departures.nextExpiryMs(graceMs);
    if (next !== undefined) {
      this.#departuresTimer = setTimeout(
        () => {
          this.#publish();
        },
        Math.max(0, next - clock.monotonic()) + 10,
      );
      this.#departuresTimer.unref();
    }
  }
}
