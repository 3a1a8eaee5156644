/**
 * A project's view of the Postgres store under one lease: its commits (polls and outbox
 * acknowledgements alike) are fenced with the lease's holder and token. The daemon gives each
 * `ProjectSync` the view of the lease it was created under; a new claim of the project gets a
 * new `ProjectSync` with a new view, so a poll still in flight from an older claim can only be
 * rejected.
 */
import type { CommitDetails } from "../store/commit-details.js";
import type { CommitFence } from "../store/fencing.js";
import type { PostgresStateStore } from "../store/postgres-store.js";
import type { ProjectState, StateStore } from "../store/index.js";

export class LeasedStateStore implements StateStore {
  readonly kind = "postgres";

  constructor(
    private readonly store: PostgresStateStore,
    readonly fence: CommitFence,
  ) {}

  open(): Promise<void> {
    return this.store.open();
  }

  load(projectId: string): Promise<ProjectState | undefined> {
    return this.store.load(projectId);
  }

  commit(state: ProjectState, details?: CommitDetails): Promise<void> {
    return this.store.commitFenced(state, details, this.fence);
  }

  projects(): Promise<string[]> {
    return this.store.projects();
  }

  /** The shared store is closed by its owner, not through a project's view. */
  async close(): Promise<void> {
    // Nothing of its own to release.
  }
}
