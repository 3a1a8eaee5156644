/**
 * Which projects the accounts have: those each lists by hand, and those of `all` and of its
 * organisations, discovered again every interval (a failed discovery keeps what the last one
 * found). Each change is handed to the watched projects.
 */
import type { ApiClient } from "../api/index.js";
import { isDiscovered, type AccountPlan } from "../config/index.js";
import { errorFields, type Logger } from "../logger.js";
import type { Scheduler } from "../scheduler/index.js";
import type { DaemonObserver } from "../sync/index.js";
import { discoverAccountProjects } from "./account-discovery.js";
import { DiscoveryLoop } from "./discovery-loop.js";
import type { FleetDirectory } from "./fleet-directory.js";
import type { AccountFinding } from "./project-owners.js";
import type { WatchedProjects } from "./watched-projects.js";

export interface DiscoveryInputs {
  /**
   * Each account's client and scheduler (told to try what was refused once its key works), told
   * how its discovery went (a refused key, a wrong base URL).
   */
  readonly accounts: readonly {
    readonly name: string;
    readonly client: ApiClient;
    readonly scheduler: Scheduler;
    discovered(error?: unknown): Promise<void>;
  }[];
  readonly watched: WatchedProjects;
  /** Told what the listings said of each project (names beside ids). */
  readonly directory: FleetDirectory;
  readonly notify: Required<DaemonObserver>;
  readonly logger: Logger;
}

/** What a reload may change in what is discovered: the accounts' projects, the interval. */
export interface DiscoverySettings {
  readonly accounts: readonly AccountPlan[];
  readonly intervalSeconds: number;
}

export class ProjectDiscovery {
  readonly #inputs: DiscoveryInputs;
  #settings: DiscoverySettings = { accounts: [], intervalSeconds: 0 };
  /** Each discovered account's last successful listing: a failed one keeps the previous. */
  readonly #discovered = new Map<string, readonly string[]>();
  readonly #loop = new DiscoveryLoop((current) => this.#discover(current));

  constructor(inputs: DiscoveryInputs) {
    this.#inputs = inputs;
  }

  /** Watches the listed projects, and discovers those of `all` and organisations. */
  async follow(settings: DiscoverySettings): Promise<void> {
    this.#settings = settings;
    if (settings.accounts.some((a) => isDiscovered(a.projects))) {
      if (this.#loop.running) {
        this.#loop.setInterval(settings.intervalSeconds);
        await this.#inputs.watched.set(this.#findings(), false);
      } else await this.#loop.start(settings.intervalSeconds);
    } else {
      this.#loop.stop();
      this.#discovered.clear();
      await this.#inputs.watched.set(this.#findings(), false);
    }
  }

  stop(): void {
    this.#loop.stop();
  }

  /** What each account lists by hand, and what its last successful discovery found. */
  #findings(): AccountFinding[] {
    return this.#settings.accounts.map((plan) => ({
      account: plan.name,
      projectIds: [...plan.projects.ids, ...(this.#discovered.get(plan.name) ?? [])],
    }));
  }

  #account(name: string): DiscoveryInputs["accounts"][number] {
    const found = this.#inputs.accounts.find((a) => a.name === name);
    if (found === undefined) throw new Error(`no API client for the account ${name}`);
    return found;
  }

  /** Discovers every account's projects once; resolves whether all succeeded. */
  async #discover(current: () => boolean): Promise<boolean> {
    const { logger: log, notify } = this.#inputs;
    const failures: { account: string; error: unknown }[] = [];
    for (const plan of this.#settings.accounts.filter((a) => isDiscovered(a.projects))) {
      try {
        const account = this.#account(plan.name);
        const found = await discoverAccountProjects(
          account.client,
          plan.projects,
          (skipped, org) => {
            log.warn(
              { account: plan.name, org, project: skipped.id, problem: skipped.problem },
              "project discovery skipped an entry that is not a usable project; the others are watched",
            );
          },
        );
        const { ids } = found;
        this.#discovered.set(plan.name, ids);
        this.#inputs.directory.listed(found.listed);
        log.info({ account: plan.name, projects: ids.length }, "projects discovered");
        await account.discovered();
        // The key works, and the projects listed exist: what was refused is tried at once.
        account.scheduler.retryRefused();
      } catch (error) {
        failures.push({ account: plan.name, error });
        log.error(
          { account: plan.name, ...errorFields(error) },
          "project discovery failed; its projects found before are kept, and it is retried",
        );
        await this.#inputs.accounts.find((a) => a.name === plan.name)?.discovered(error);
      }
    }
    // A reload to a list of projects (or a stop) while this discovery ran: the list wins.
    if (current()) await this.#inputs.watched.set(this.#findings(), true);
    // Told after the new list (which clears the status page's banner), so that they stay shown
    // until the next discovery.
    for (const { account, error } of failures) notify.discoveryFailed(error, account);
    return !current() || failures.length === 0;
  }
}
