import type { CommitDetails } from "./commit-details.js";
import type { ProjectState } from "./project-state.js";

/**
 * Where the sync engine keeps each project's state. `commit` replaces a project's whole state in
 * one atomic step: after it resolves, a crash at any instant leaves the new document; if it
 * rejects, the old one.
 *
 * The interface is per project so that a store shared by several processes (a database) can
 * later fence a commit by a process that no longer holds the project.
 */
export interface StateStore {
  readonly kind: string;
  /** Prepares the store (creates the directory, checks it can be written). */
  open(): Promise<void>;
  /** The committed state, undefined for a project never committed; throws StateFileError. */
  load(projectId: string): Promise<ProjectState | undefined>;
  /**
   * `details` names the operations a poll's commit counts, for a store that archives them in
   * the same atomic step (the Postgres store with `history: postgres`); others ignore it.
   */
  commit(state: ProjectState, details?: CommitDetails): Promise<void>;
  /** Projects that have a committed state. */
  projects(): Promise<string[]>;
  close(): Promise<void>;
}

export type StateFileProblem = "corrupt" | "foreign" | "version" | "unreadable" | "unwritable";

/**
 * A state file that cannot be used. The daemon never overwrites such a file: the project stays
 * stopped until an operator moves the file aside (the message says which file).
 */
export class StateFileError extends Error {
  override readonly name = "StateFileError";

  constructor(
    readonly file: string,
    readonly problem: StateFileProblem,
    detail: string,
  ) {
    // Named once: a file-system error already quotes the path it failed on.
    super(detail.includes(`'${file}'`) ? detail : `${detail}: ${file}`);
  }
}
