import type { Endpoint } from "../contract/index.js";
import type { ProjectState, StateFileError } from "../store/index.js";
import type { ComputeView, ProbeOutcome } from "./compute-views.js";
import type { BranchInfo, ProjectInfo } from "./fleet-names.js";
import type { PollResult } from "./poll-types.js";

/**
 * What the daemon reports as it runs: the projects' polls, commits and committed states, their
 * endpoints, discovery. Metrics, the status page and logs subscribe to it; none of them can
 * change what the daemon does. It is defined here, below both the daemon that reports and the
 * parts that listen.
 */
export interface DaemonObserver {
  /** The set of watched projects changed (configured list or discovery). */
  projectsChanged?(projectIds: readonly string[]): void;
  /** A project's committed state was loaded at start (counters resume from it). */
  stateLoaded?(projectId: string, state: ProjectState): void;
  /** The notifier committed a change to a project's outbox (deliveries, dead letters). */
  outboxChanged?(projectId: string, state: ProjectState): void;
  /** A poll was committed. */
  committed?(projectId: string, result: PollResult, durationSeconds: number): void;
  /** A poll failed (API fault); nothing was committed. */
  pollFailed?(projectId: string, error: unknown, durationSeconds: number): void;
  /** A poll's commit failed; nothing changed. */
  commitFailed?(projectId: string, error: unknown): void;
  /** A project's state file cannot be used; it is not polled until an operator acts. */
  blocked?(projectId: string, error: StateFileError): void;
  /** A project's endpoints were listed. */
  endpointsListed?(projectId: string, endpoints: readonly Endpoint[]): void;
  endpointsFailed?(projectId: string, error: unknown): void;
  /** What is shown of a project beside its id was read, or changed. */
  projectDescribed?(projectId: string, info: ProjectInfo): void;
  /**
   * A project's branches were listed: those to show (at most the cap per project, and those
   * gone within the grace), replacing the previous list.
   */
  branchesListed?(projectId: string, branches: readonly BranchInfo[]): void;
  /** An account's discovery (`all`, organisations) failed; its previous list stays. */
  discoveryFailed?(error: unknown, account: string): void;
  /** New alerts found the project's outbox full and were dropped. */
  alertsDropped?(projectId: string, count: number): void;
  /** New spans found the project's span queue full and were dropped. */
  spansDropped?(projectId: string, count: number): void;
  /**
   * What the compute probe knows of an endpoint's compute changed; `probe` is the outcome of the
   * probe that changed it, if one did.
   */
  computeChanged?(projectId: string, compute: ComputeView, probe?: ProbeOutcome): void;
  /** The compute probe no longer looks at an endpoint's compute (its account is not probed). */
  computeForgotten?(projectId: string, endpointId: string): void;
}

/** Calls every observer; a throwing observer is isolated so the others still hear the event. */
export function broadcast(
  observers: readonly DaemonObserver[],
  onError: (e: unknown) => void,
): Required<DaemonObserver> {
  const call =
    <K extends keyof DaemonObserver>(key: K) =>
    (...args: Parameters<Required<DaemonObserver>[K]>): void => {
      for (const o of observers) {
        const fn = o[key] as ((...a: typeof args) => void) | undefined;
        if (fn === undefined) continue;
        try {
          fn.apply(o, args);
        } catch (error) {
          onError(error);
        }
      }
    };
  return {
    projectsChanged: call("projectsChanged"),
    stateLoaded: call("stateLoaded"),
    committed: call("committed"),
    outboxChanged: call("outboxChanged"),
    pollFailed: call("pollFailed"),
    commitFailed: call("commitFailed"),
    blocked: call("blocked"),
    endpointsListed: call("endpointsListed"),
    endpointsFailed: call("endpointsFailed"),
    projectDescribed: call("projectDescribed"),
    branchesListed: call("branchesListed"),
    discoveryFailed: call("discoveryFailed"),
    alertsDropped: call("alertsDropped"),
    spansDropped: call("spansDropped"),
    computeChanged: call("computeChanged"),
    computeForgotten: call("computeForgotten"),
  };
}
