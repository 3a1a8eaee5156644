/**
 * The watched projects and what each one holds while it is watched: its `ProjectSync` (reading
 * through its account's API client), the fencing token it commits under (Postgres store with
 * leases), the notifier's view of its outbox, and its poll in flight. `watch` replaces the set; a
 * project handed over to another replica is first `settled` (its poll in flight finished or
 * abandoned).
 */
import type { OutboxOwner } from "../alerts/index.js";
import { LeaseLostError } from "../store/fencing.js";
import {
  addToOutbox,
  type OutboxEntry,
  type ProjectState,
  type StateStore,
} from "../store/index.js";
import {
  ProjectSync,
  type OperationsSource,
  type PollOptions,
  type StepOutcome,
} from "../sync/index.js";

/** How a project is to be watched: under which account, and which lease token. */
export interface WatchTerms {
  /** The account whose API client reads the project. */
  readonly account: string;
  /** The lease's fencing token (leases only). */
  readonly token: number | undefined;
}

export interface RosterOptions {
  /** The API client of an account, which reads its projects' operations. */
  readonly sourceFor: (account: string) => OperationsSource;
  /** The store a project commits to; `token` is its lease's fencing token (leases only). */
  readonly storeFor: (projectId: string, token: number | undefined) => StateStore;
  /** Whether a project's lease is still valid (always true without leases). */
  readonly leaseValid: (projectId: string, token: number) => boolean;
  readonly outboxLimit: number;
  /** The notifier committed a change to a project's outbox. */
  readonly outboxCommitted: (projectId: string, state: ProjectState) => void;
  /** A commit of the notifier's was refused: the project's lease is lost. */
  readonly leaseLost: (projectId: string, error: LeaseLostError) => void;
}

interface Watched extends WatchTerms {
  readonly sync: ProjectSync;
  readonly owner: OutboxOwner;
}

export class ProjectRoster {
  readonly #projects = new Map<string, Watched>();
  /** Each project's poll in flight, kept after the project is dropped until it settles. */
  readonly #inFlight = new Map<string, Promise<StepOutcome>>();

  constructor(private readonly options: RosterOptions) {}

  ids(): string[] {
    return [...this.#projects.keys()];
  }

  /** The projects watched under one account. */
  idsOf(account: string): string[] {
    return [...this.#projects].filter(([, w]) => w.account === account).map(([id]) => id);
  }

  /** The account a watched project is polled under. */
  accountOf(projectId: string): string | undefined {
    return this.#projects.get(projectId)?.account;
  }

  get size(): number {
    return this.#projects.size;
  }

  sync(projectId: string): ProjectSync | undefined {
    return this.#projects.get(projectId)?.sync;
  }

  /** What the notifier drains: each project's outbox, while its lease is valid. */
  *owners(): IterableIterator<OutboxOwner> {
    for (const watched of this.#projects.values()) yield watched.owner;
  }

  /** A watched project's outbox, as the notifier drains it. */
  owner(projectId: string): OutboxOwner | undefined {
    return this.#projects.get(projectId)?.owner;
  }

  /**
   * Watches exactly the projects of `wanted`, each through its account's client and committing
   * under the token given (undefined without leases). A project claimed again under a new
   * token, or now read through another account, starts afresh from its committed state.
   * Returns the syncs added, whose states are still to be loaded.
   */
  watch(wanted: ReadonlyMap<string, WatchTerms>): ProjectSync[] {
    for (const [id, watched] of this.#projects) {
      const terms = wanted.get(id);
      if (
        terms === undefined ||
        terms.token !== watched.token ||
        terms.account !== watched.account
      ) {
        this.#projects.delete(id);
      }
    }
    const added: ProjectSync[] = [];
    for (const [id, { token, account }] of wanted) {
      if (this.#projects.has(id)) continue;
      const sync = new ProjectSync(
        id,
        this.options.storeFor(id, token),
        this.options.sourceFor(account),
        this.options.outboxLimit,
      );
      this.#projects.set(id, { sync, token, account, owner: this.#owner(sync, token) });
      added.push(sync);
    }
    return added;
  }

  /**
   * One poll-and-commit step of a watched project, with the poll options of the moment;
   * undefined if it is not watched.
   */
  async step(
    projectId: string,
    nowMs: number,
    options: PollOptions,
    signal: AbortSignal,
  ): Promise<StepOutcome | undefined> {
    const watched = this.#projects.get(projectId);
    if (watched === undefined) return undefined;
    const step = watched.sync.step(nowMs, options, signal);
    this.#inFlight.set(projectId, step);
    try {
      return await step;
    } finally {
      if (this.#inFlight.get(projectId) === step) this.#inFlight.delete(projectId);
    }
  }

  /**
   * Whether a watched project's outbox holds alerts or a firing set, or its span queue spans:
   * raised by its last poll,
   * or left pending by a run before (a state just loaded, a lease valid again).
   */
  hasDeliveryWork(projectId: string): boolean {
    const state = this.#projects.get(projectId)?.sync.state;
    return (
      state !== undefined &&
      (state.outbox.length > 0 || (state.firing?.length ?? 0) > 0 || (state.spans?.length ?? 0) > 0)
    );
  }

  /**
   * Adds alerts raised outside a poll (the compute probe's advice) to a watched project's outbox
   * in one commit, after the polls' and deliveries' commits before it. Resolves with those the
   * full outbox had no room for, or undefined when the project is not watched or has no
   * committed state yet (nothing is added then).
   */
  async addAlerts(
    projectId: string,
    entries: readonly OutboxEntry[],
    nowMs: number,
  ): Promise<OutboxEntry[] | undefined> {
    const watched = this.#projects.get(projectId);
    if (watched === undefined) return undefined;
    let dropped: OutboxEntry[] = [];
    const changed = await watched.owner.updateOutbox(nowMs, (state) => {
      const added = addToOutbox(state.outbox, entries, this.options.outboxLimit);
      dropped = added.dropped;
      return { outbox: added.outbox, deadLetters: state.deadLetters };
    });
    return changed ? dropped : undefined;
  }

  /** Resolves once the project's poll in flight, if any, has settled (also once dropped). */
  async settled(projectId: string): Promise<void> {
    await this.#inFlight.get(projectId)?.catch(() => undefined);
  }

  /** The notifier's view of a project: with a lease, its outbox only while the lease is valid. */
  #owner(sync: ProjectSync, token: number | undefined): OutboxOwner {
    const { leaseValid, outboxCommitted, leaseLost } = this.options;
    const valid = () => token === undefined || leaseValid(sync.projectId, token);
    return {
      projectId: sync.projectId,
      get state() {
        return valid() ? sync.state : undefined;
      },
      updateOutbox: async (nowMs, change) => {
        try {
          const changed = await sync.updateOutbox(nowMs, change);
          const state = sync.state;
          // Deliveries change the committed outbox between polls: the gauges follow it.
          if (changed && state !== undefined) outboxCommitted(sync.projectId, state);
          return changed;
        } catch (error) {
          if (error instanceof LeaseLostError) leaseLost(sync.projectId, error);
          throw error;
        }
      },
    };
  }
}
