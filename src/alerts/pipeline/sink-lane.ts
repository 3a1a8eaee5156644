/**
 * One sink's lane of the delivery: its pace, each project's backoff, its firing set's next
 * resend, and which projects have work for it. A lane knows its projects from being told (a
 * project's outbox gained alerts, a state was loaded, a reload), never by rescanning every
 * project: with nothing pending it has nothing to look at.
 */
import type { ProjectState } from "../../store/index.js";
import type { OutboxChange } from "../../sync/index.js";
import type { Sink } from "../sinks/sink.js";
import { laneDueMs, type BirthOf, type SinkPolicy } from "./delivery-plan.js";

/** A project whose outbox the delivery drains. */
export interface OutboxOwner {
  readonly projectId: string;
  readonly state: ProjectState | undefined;
  updateOutbox(nowMs: number, change: (state: ProjectState) => OutboxChange): Promise<boolean>;
}

/** A project's consecutive failed attempts for the sink, and when to try again (monotonic). */
export interface Backoff {
  readonly failures: number;
  readonly retryAtMs: number;
}

export class SinkLane {
  busy = false;
  /** No message before this time (monotonic: the sink's pace, or a 429's Retry-After). */
  notBeforeMs = 0;
  /** Nothing to look at before this time, after a run that could do nothing (monotonic). */
  quietUntilMs = 0;
  /** A sink that keeps alerts firing: when its firing set is next sent again (monotonic). */
  nextRefreshMs = 0;
  readonly backoff: Map<string, Backoff>;
  /**
   * Per project, the alerts of an attempt that failed or was not acknowledged: the next attempt
   * sends these alone (those still pending), so that a repeat keeps its Idempotency-Key.
   */
  readonly unsettled: Map<string, ReadonlySet<string>>;
  /** Projects that may hold alerts pending for the sink. */
  readonly pending = new Set<string>();
  /** Projects that may hold alerts in the sink's firing set. */
  readonly firing = new Set<string>();

  /** `kept`: the lane of a sink of the same name before a reload, whose pace it keeps. */
  constructor(
    readonly sink: Sink,
    readonly policy: SinkPolicy,
    kept?: SinkLane,
  ) {
    this.backoff = kept?.backoff ?? new Map<string, Backoff>();
    this.unsettled = kept?.unsettled ?? new Map<string, ReadonlySet<string>>();
    this.notBeforeMs = kept?.notBeforeMs ?? 0;
    this.nextRefreshMs = kept?.nextRefreshMs ?? 0;
  }

  get name(): string {
    return this.sink.name;
  }

  /** Takes note of the work `owner` has for the sink now. */
  note(owner: OutboxOwner): void {
    const state = owner.state;
    if (state === undefined) return;
    if (state.outbox.some((e) => e.pending.includes(this.name))) this.pending.add(owner.projectId);
    if (this.sink.firing !== undefined && state.firing?.some((f) => f.sink === this.name)) {
      this.firing.add(owner.projectId);
    }
  }

  /**
   * The owners of the projects in `ids` that still have work for the sink (`has`); the others
   * are forgotten until they are noted again.
   */
  holding(
    ids: Set<string>,
    ownerOf: (projectId: string) => OutboxOwner | undefined,
    has: (state: ProjectState) => boolean,
  ): OutboxOwner[] {
    const owners: OutboxOwner[] = [];
    for (const id of ids) {
      const owner = ownerOf(id);
      if (owner?.state !== undefined && has(owner.state)) owners.push(owner);
      else ids.delete(id);
    }
    return owners;
  }

  /** The owners with alerts pending for the sink. */
  pendingOwners(ownerOf: (projectId: string) => OutboxOwner | undefined): OutboxOwner[] {
    return this.holding(this.pending, ownerOf, (s) =>
      s.outbox.some((e) => e.pending.includes(this.name)),
    );
  }

  /** The owners with alerts in the sink's firing set. */
  firingOwners(ownerOf: (projectId: string) => OutboxOwner | undefined): OutboxOwner[] {
    return this.holding(this.firing, ownerOf, (s) =>
      (s.firing ?? []).some((f) => f.sink === this.name),
    );
  }

  /** When the lane next has something to do (monotonic), or undefined: nothing for now. */
  dueMs(ownerOf: (projectId: string) => OutboxOwner | undefined, birthOf: BirthOf) {
    const projects = this.pendingOwners(ownerOf).map((o) => ({
      projectId: o.projectId,
      outbox: o.state?.outbox ?? [],
      retryAtMs: this.backoff.get(o.projectId)?.retryAtMs,
    }));
    const fires = this.sink.firing !== undefined && this.firingOwners(ownerOf).length > 0;
    const due = laneDueMs(
      projects,
      this.policy,
      { notBeforeMs: this.notBeforeMs, refreshAtMs: fires ? this.nextRefreshMs : undefined },
      birthOf,
    );
    return due === undefined ? undefined : Math.max(due, this.quietUntilMs);
  }
}
