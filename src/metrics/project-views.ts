/**
 * What the metrics module knows about each watched project: its committed state, the outcome
 * of its latest poll and its latest endpoint listing. The daemon's reports update it; the
 * projections read it when a rendering is built. Forgetting a project here is what makes all
 * of its series disappear.
 */
import type { Endpoint } from "../contract/index.js";
import type { ProjectState, StateFileProblem } from "../store/index.js";

export interface ProjectView {
  readonly projectId: string;
  /** The committed state (loaded at start or committed since), if any. */
  readonly state: ProjectState | undefined;
  /** The latest poll succeeded and was committed. */
  readonly up: boolean;
  /** Why the project's state file cannot be used, while it cannot. */
  readonly blocked: StateFileProblem | undefined;
  /** The latest listing, or undefined before the first one. */
  readonly endpoints: readonly Endpoint[] | undefined;
}

type MutableView = { -readonly [K in keyof ProjectView]: ProjectView[K] };

export class ProjectViews implements Iterable<ProjectView> {
  readonly #views = new Map<string, MutableView>();
  /** The watched projects, once the daemon has said which they are. */
  #watched: ReadonlySet<string> | undefined;

  [Symbol.iterator](): Iterator<ProjectView> {
    return this.#views.values();
  }

  /** The watched projects are exactly `projectIds`: others are forgotten. */
  watch(projectIds: readonly string[]): void {
    this.#watched = new Set(projectIds);
    for (const id of this.#views.keys()) if (!this.#watched.has(id)) this.#views.delete(id);
    for (const id of projectIds) this.#view(id);
  }

  /*
   * A project's state is loaded, or found blocked, just before the daemon adds it to the
   * watched list, so these two are accepted for any project. The others are ignored for a
   * project no longer watched: a poll still in flight when its project was removed must not
   * bring the project's series back.
   */

  loaded(projectId: string, state: ProjectState): void {
    const view = this.#view(projectId);
    view.state = state;
    view.blocked = undefined;
  }

  blocked(projectId: string, problem: StateFileProblem): void {
    const view = this.#view(projectId);
    view.blocked = problem;
    view.up = false;
  }

  committed(projectId: string, state: ProjectState): void {
    const view = this.#watchedView(projectId);
    if (view === undefined) return;
    view.state = state;
    view.up = true;
    view.blocked = undefined;
  }

  /** The committed state changed without a poll (the notifier's outbox updates). */
  stateChanged(projectId: string, state: ProjectState): void {
    const view = this.#watchedView(projectId);
    if (view !== undefined) view.state = state;
  }

  /** A poll or its commit failed: the committed state is unchanged. */
  failed(projectId: string): void {
    const view = this.#watchedView(projectId);
    if (view !== undefined) view.up = false;
  }

  listed(projectId: string, endpoints: readonly Endpoint[]): void {
    const view = this.#watchedView(projectId);
    if (view !== undefined) view.endpoints = endpoints;
  }

  #watchedView(projectId: string): MutableView | undefined {
    if (this.#watched !== undefined && !this.#watched.has(projectId)) return undefined;
    return this.#view(projectId);
  }

  #view(projectId: string): MutableView {
    let view = this.#views.get(projectId);
    if (view === undefined) {
      view = { projectId, state: undefined, up: false, blocked: undefined, endpoints: undefined };
      this.#views.set(projectId, view);
    }
    return view;
  }
}

/** The projects that have a committed state, with it. */
export function* committed(
  projects: Iterable<ProjectView>,
): Iterable<{ projectId: string; state: ProjectState }> {
  for (const { projectId, state } of projects) if (state !== undefined) yield { projectId, state };
}
