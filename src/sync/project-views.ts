/**
 * What is known of each watched project, from the daemon's reports: its committed state, its
 * latest endpoint listing, whether its state file is usable, its latest successful poll and its
 * current run of failed polls, and what the compute probe knows of its endpoints' computes. One
 * instance is shared by everything that shows a project's health (the metrics and the status
 * page), so that they can never disagree.
 *
 * A project's state is loaded, or found blocked, just before the daemon adds it to the watched
 * list, so those two reports are taken for any project. The others are ignored for a project
 * no longer watched: a poll still in flight when its project was removed must not bring the
 * project back. Forgetting a project is what makes its series and its row disappear.
 */
import type { Endpoint } from "../contract/index.js";
import type { ProjectState, StateFileError, StateFileProblem } from "../store/index.js";
import type { ComputeView } from "./compute-views.js";
import type { BranchInfo, NameLookup, ProjectInfo } from "./fleet-names.js";
import type { DaemonObserver } from "./observer.js";
import type { PollResult } from "./poll-types.js";
import { systemClock } from "../clock.js";

/** A run of failed polls (or commits), from the first. */
export interface FailingPolls {
  /** When the first of the run failed (epoch ms). */
  readonly sinceMs: number;
  readonly count: number;
  /** The latest failure's error. */
  readonly error: unknown;
  /** The latest failure was the commit's, not the poll's. */
  readonly commit: boolean;
}

export interface ProjectView {
  readonly projectId: string;
  /** The committed state (loaded at start or committed since), if any. */
  readonly state: ProjectState | undefined;
  /** The latest poll succeeded and was committed. */
  readonly up: boolean;
  /** The state file that cannot be used, and why, while it cannot. */
  readonly blocked: { readonly file: string; readonly problem: StateFileProblem } | undefined;
  /** The latest listing, or undefined before the first one. */
  readonly endpoints: readonly Endpoint[] | undefined;
  /** The latest successful poll (epoch ms), or the state's last commit before the start. */
  readonly lastSuccessMs: number | undefined;
  /** `lastSuccessMs` is the state's last commit, from before this process started. */
  readonly lastSuccessBeforeStart: boolean;
  /** The current run of failed polls, undefined once one succeeds. */
  readonly failing: FailingPolls | undefined;
  /** New alerts dropped because the outbox was full (since the start). */
  readonly droppedAlerts: number;
  /**
   * The API's clock minus ours at the latest successful poll (0 before one), so that what is
   * shown of an operation's age is on the API's clock, as its stuck alert is.
   */
  readonly clockOffsetMs: number;
  /**
   * What the compute probe knows of the listed endpoints' computes, by endpoint id (replaced
   * whole on every change); undefined while it knows nothing.
   */
  readonly computes: ReadonlyMap<string, ComputeView> | undefined;
  /** Its name, account, organisation and region, once read. */
  readonly info: ProjectInfo | undefined;
  /** Its branches as last listed (capped, with those gone within the grace), once listed. */
  readonly branches: readonly BranchInfo[] | undefined;
}

type MutableView = { -readonly [K in keyof ProjectView]: ProjectView[K] };

export class ProjectViews implements Iterable<ProjectView>, DaemonObserver, NameLookup {
  readonly #views = new Map<string, MutableView>();
  /** The watched projects in the daemon's order, once it has said which they are. */
  #watched: readonly string[] | undefined;
  #watchedSet: ReadonlySet<string> | undefined;
  readonly #now: () => number;

  constructor(options: { readonly now?: () => number } = {}) {
    this.#now = options.now ?? systemClock.wall;
  }

  /** Every project with a view, watched or about to be. */
  [Symbol.iterator](): Iterator<ProjectView> {
    return this.#views.values();
  }

  /** The watched projects, in the daemon's order. */
  watched(): readonly string[] {
    return this.#watched ?? [];
  }

  get(projectId: string): ProjectView | undefined {
    return this.#views.get(projectId);
  }

  projectsChanged(projectIds: readonly string[]): void {
    this.#watched = [...projectIds];
    this.#watchedSet = new Set(projectIds);
    for (const id of this.#views.keys()) if (!this.#watchedSet.has(id)) this.#views.delete(id);
    for (const id of projectIds) this.#view(id);
  }

  stateLoaded(projectId: string, state: ProjectState): void {
    const view = this.#view(projectId);
    view.state = state;
    view.blocked = undefined;
    if (view.lastSuccessMs === undefined) {
      view.lastSuccessMs = state.committedAtMs;
      view.lastSuccessBeforeStart = true;
    }
  }

  blocked(projectId: string, error: StateFileError): void {
    const view = this.#view(projectId);
    view.blocked = { file: error.file, problem: error.problem };
    view.up = false;
  }

  committed(projectId: string, result: PollResult): void {
    const view = this.#watchedView(projectId);
    if (view === undefined) return;
    view.state = result.state;
    view.clockOffsetMs = result.serverNowMs - result.state.committedAtMs;
    view.up = true;
    view.blocked = undefined;
    view.lastSuccessMs = this.#now();
    view.lastSuccessBeforeStart = false;
    view.failing = undefined;
  }

  /** The committed state changed without a poll (the notifier's outbox updates). */
  outboxChanged(projectId: string, state: ProjectState): void {
    const view = this.#watchedView(projectId);
    if (view !== undefined) view.state = state;
  }

  pollFailed(projectId: string, error: unknown): void {
    this.#failed(projectId, error, false);
  }

  commitFailed(projectId: string, error: unknown): void {
    this.#failed(projectId, error, true);
  }

  endpointsListed(projectId: string, endpoints: readonly Endpoint[]): void {
    const view = this.#watchedView(projectId);
    if (view === undefined) return;
    view.endpoints = endpoints;
    // A deleted endpoint's compute goes with it.
    const computes = view.computes;
    if (computes !== undefined) {
      const listed = new Set(endpoints.map((e) => e.id));
      if ([...computes.keys()].some((id) => !listed.has(id))) {
        const kept = [...computes].filter(([id]) => listed.has(id));
        view.computes = kept.length === 0 ? undefined : new Map(kept);
      }
    }
  }

  projectDescribed(projectId: string, info: ProjectInfo): void {
    const view = this.#watchedView(projectId);
    if (view !== undefined) view.info = info;
  }

  branchesListed(projectId: string, branches: readonly BranchInfo[]): void {
    const view = this.#watchedView(projectId);
    if (view !== undefined) view.branches = branches;
  }

  projectName(projectId: string): string | undefined {
    return this.#views.get(projectId)?.info?.name;
  }

  projectRegion(projectId: string): string | undefined {
    return this.#views.get(projectId)?.info?.regionId;
  }

  branchName(projectId: string, branchId: string): string | undefined {
    return this.#views.get(projectId)?.branches?.find((b) => b.id === branchId)?.name;
  }

  endpointName(projectId: string, endpointId: string): string | undefined {
    return this.#views.get(projectId)?.endpoints?.find((e) => e.id === endpointId)?.name;
  }

  computeChanged(projectId: string, compute: ComputeView): void {
    const view = this.#watchedView(projectId);
    if (view === undefined) return;
    if (view.endpoints !== undefined && !view.endpoints.some((e) => e.id === compute.endpointId)) {
      return;
    }
    view.computes = new Map(view.computes).set(compute.endpointId, compute);
  }

  computeForgotten(projectId: string, endpointId: string): void {
    const view = this.#watchedView(projectId);
    if (view?.computes?.has(endpointId) !== true) return;
    const kept = [...view.computes].filter(([id]) => id !== endpointId);
    view.computes = kept.length === 0 ? undefined : new Map(kept);
  }

  alertsDropped(projectId: string, count: number): void {
    const view = this.#watchedView(projectId);
    if (view !== undefined) view.droppedAlerts += count;
  }

  /**
   * A poll or its commit failed: the committed state is unchanged. The state file was usable
   * (a blocked project's step fails before it polls), so the project is no longer blocked.
   */
  #failed(projectId: string, error: unknown, commit: boolean): void {
    const view = this.#watchedView(projectId);
    if (view === undefined) return;
    view.up = false;
    view.blocked = undefined;
    view.failing = {
      sinceMs: view.failing?.sinceMs ?? this.#now(),
      count: (view.failing?.count ?? 0) + 1,
      error,
      commit,
    };
  }

  #watchedView(projectId: string): MutableView | undefined {
    if (this.#watchedSet !== undefined && !this.#watchedSet.has(projectId)) return undefined;
    return this.#view(projectId);
  }

  #view(projectId: string): MutableView {
    let view = this.#views.get(projectId);
    if (view === undefined) {
      view = {
        projectId,
        state: undefined,
        up: false,
        blocked: undefined,
        endpoints: undefined,
        clockOffsetMs: 0,
        lastSuccessMs: undefined,
        lastSuccessBeforeStart: false,
        failing: undefined,
        droppedAlerts: 0,
        computes: undefined,
        info: undefined,
        branches: undefined,
      };
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
