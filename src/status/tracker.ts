/**
 * What only the status page remembers of the daemon's reports: per project, a bounded list of
 * recent operation failures; and the last failed discovery. A project's health (its state,
 * last success, failing polls) is the shared `ProjectViews`', not this tracker's.
 */
import type { ProjectState } from "../store/index.js";
import type { DaemonObserver, PollResult } from "../sync/index.js";
import type { SilencedView } from "./alerts/silence-status.js";
import type { FailureView, TrackedProject } from "./projects/project-rows.js";
import { STATUS_LIMITS } from "./shared/limits.js";
import { systemClock } from "../clock.js";

type MutableTracked = { -readonly [K in keyof TrackedProject]: TrackedProject[K] };

/** Memory is O(projects × failuresKept); forgotten projects are dropped. */
export class StatusTracker implements DaemonObserver {
  readonly #projects = new Map<string, MutableTracked>();
  readonly #now: () => number;
  readonly #failuresKept: number;
  readonly #silencedKept: number;
  /** Each account's failed discovery since the projects last changed. */
  readonly #discoveryErrors = new Map<string, { atMs: number; error: unknown }>();
  /** Alerts silences kept from sinks, newest first, at most `silencedKept` (all projects). */
  #silenced: SilencedView[] = [];

  constructor(options: { now?: () => number; failuresKept?: number; silencedKept?: number } = {}) {
    this.#now = options.now ?? systemClock.wall;
    this.#failuresKept = options.failuresKept ?? STATUS_LIMITS.failuresKept;
    this.#silencedKept = options.silencedKept ?? STATUS_LIMITS.silencedKept;
  }

  /** Recently silenced alerts, newest first: one per alert and silence, with its sinks. */
  get silenced(): readonly SilencedView[] {
    return this.#silenced;
  }

  get(projectId: string): TrackedProject | undefined {
    return this.#projects.get(projectId);
  }

  /** The accounts whose discovery failed since the projects last changed, and how. */
  get discoveryErrors(): ReadonlyMap<string, { readonly atMs: number; readonly error: unknown }> {
    return this.#discoveryErrors;
  }

  projectsChanged(projectIds: readonly string[]): void {
    const wanted = new Set(projectIds);
    for (const id of this.#projects.keys()) if (!wanted.has(id)) this.#projects.delete(id);
    this.#discoveryErrors.clear();
  }

  stateLoaded(projectId: string, state: ProjectState): void {
    // Failed operations still watched for a retry are the failures known from before the start.
    const known = state.tracked
      .filter((t) => t.failed && (t.status === "failed" || t.status === "error"))
      .map((t): FailureView => ({
        operationId: t.id,
        action: t.action,
        status: t.status,
        failuresCount: t.failuresCount,
        error: t.error,
        atMs: t.updatedAtMs,
        detectedAtMs: t.updatedAtMs,
      }))
      .sort((a, b) => a.atMs - b.atMs);
    const p = this.#project(projectId);
    // Oldest first: each goes to the front, so the newest ends first.
    for (const failure of known) this.#remember(p, failure);
  }

  committed(projectId: string, result: PollResult): void {
    const p = this.#project(projectId);
    const now = this.#now();
    this.#rememberSilenced(projectId, result, now);
    for (const t of result.transitions) {
      if (t.kind !== "ended" || (t.status !== "failed" && t.status !== "error")) continue;
      this.#remember(p, {
        operationId: t.op.id,
        action: t.op.action,
        status: t.status,
        failuresCount: t.op.failuresCount,
        error: t.op.error,
        atMs: t.op.updatedAtMs,
        detectedAtMs: now,
      });
    }
  }

  discoveryFailed(error: unknown, account: string): void {
    this.#discoveryErrors.set(account, { atMs: this.#now(), error });
  }

  #rememberSilenced(projectId: string, result: PollResult, now: number): void {
    if (result.silenced.length === 0) return;
    const fresh = new Map<string, SilencedView>();
    for (const { alert, sink, silence } of result.silenced) {
      const key = JSON.stringify([alert.id, silence]);
      const seen = fresh.get(key);
      fresh.set(key, {
        projectId,
        kind: alert.kind,
        operationId: alert.operationId,
        action: alert.action,
        status: alert.status,
        sinks: [...(seen?.sinks ?? []), sink],
        silence,
        atMs: now,
      });
    }
    this.#silenced = [...[...fresh.values()].reverse(), ...this.#silenced].slice(
      0,
      this.#silencedKept,
    );
  }

  /** Adds a failure at the front, unless the same failure is already remembered. */
  #remember(p: MutableTracked, failure: FailureView): void {
    const same = p.failures.some(
      (f) =>
        f.operationId === failure.operationId &&
        f.status === failure.status &&
        f.failuresCount === failure.failuresCount &&
        f.atMs === failure.atMs,
    );
    if (same) return;
    p.failures = [failure, ...p.failures].slice(0, this.#failuresKept);
  }

  #project(projectId: string): MutableTracked {
    let p = this.#projects.get(projectId);
    if (p === undefined) {
      p = { failures: [] };
      this.#projects.set(projectId, p);
    }
    return p;
  }
}
