/**
 * One project's sync loop step: load its committed state (once), poll, commit the result in
 * one atomic step, and only then make it the project's current state. A failed request or a
 * failed commit leaves the committed state as it was; the next poll starts from it again.
 */
import { StateFileError, type ProjectState, type StateStore } from "../store/index.js";
import { restoreTotals } from "./totals.js";
import { poll, type OperationsSource, type PollOptions, type PollResult } from "./poll.js";

/** Where a project stands. `blocked` waits for an operator (its state file is unusable). */
export type ProjectStatus =
  | { readonly kind: "unloaded" }
  | {
      readonly kind: "ready";
      readonly state: ProjectState | undefined;
      /** The state file's histogram buckets differ from this build's and restart from zero. */
      readonly bucketsReset?: boolean;
    }
  | { readonly kind: "blocked"; readonly error: StateFileError };

export type StepOutcome =
  | { readonly kind: "committed"; readonly result: PollResult }
  | { readonly kind: "blocked"; readonly error: StateFileError }
  | { readonly kind: "poll_failed"; readonly error: unknown }
  | { readonly kind: "commit_failed"; readonly error: unknown; readonly result: PollResult };

export class ProjectSync {
  private current: ProjectStatus = { kind: "unloaded" };

  constructor(
    readonly projectId: string,
    private readonly store: StateStore,
    private readonly source: OperationsSource,
    private readonly options: PollOptions,
  ) {}

  get status(): ProjectStatus {
    return this.current;
  }

  /** The committed state, if any. */
  get state(): ProjectState | undefined {
    return this.current.kind === "ready" ? this.current.state : undefined;
  }

  /**
   * True while the project has operations in progress (it then belongs in the fast lane). A
   * failed operation watched for a retry does not count: it is followed at the base pace.
   */
  hasOpenOperations(): boolean {
    return this.state?.tracked.some((t) => t.status !== "failed") ?? false;
  }

  /**
   * Loads the committed state unless it is loaded. A blocked project tries again each time, so
   * that moving its state file aside brings it back without a restart.
   */
  async load(): Promise<ProjectStatus> {
    if (this.current.kind === "ready") return this.current;
    try {
      const loaded = await this.store.load(this.projectId);
      if (loaded === undefined) {
        this.current = { kind: "ready", state: undefined };
      } else {
        const { totals, bucketsReset } = restoreTotals(loaded.totals);
        this.current = { kind: "ready", state: { ...loaded, totals }, bucketsReset };
      }
    } catch (error) {
      if (!(error instanceof StateFileError)) throw error;
      this.current = { kind: "blocked", error };
    }
    return this.current;
  }

  async step(nowMs: number, signal?: AbortSignal): Promise<StepOutcome> {
    const status = await this.load();
    if (status.kind === "blocked") return { kind: "blocked", error: status.error };
    const previous = status.kind === "ready" ? status.state : undefined;

    let result: PollResult;
    try {
      result = await poll(this.source, this.projectId, previous, nowMs, this.options, signal);
    } catch (error) {
      return { kind: "poll_failed", error };
    }
    // An abort after the walk must not commit: shutdown abandons the poll whole.
    if (signal?.aborted === true) return { kind: "poll_failed", error: signal.reason };
    try {
      await this.store.commit(result.state);
    } catch (error) {
      return { kind: "commit_failed", error, result };
    }
    this.current = { kind: "ready", state: result.state };
    return { kind: "committed", result };
  }
}
