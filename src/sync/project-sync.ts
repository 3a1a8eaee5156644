/**
 * One project's sync loop step: load its committed state (once), poll, commit the result in
 * one atomic step, and only then make it the project's current state. A failed request or a
 * failed commit leaves the committed state as it was; the next poll starts from it again.
 *
 * A project's state has two writers: polls, and the notifier acknowledging deliveries from the
 * outbox. Their commits are serialised here, and each builds on the latest committed state, so
 * a poll never undoes an acknowledgement that happened while it was walking.
 */
import { addToOutbox, addToSpanQueue, withIncidentMarks } from "../store/index.js";
import {
  StateFileError,
  type DeadLetter,
  type FiringAlert,
  type IncidentRecord,
  type OutboxEntry,
  type ProjectState,
  type QueuedSpan,
  type SpanDeadLetter,
  type StateStore,
} from "../store/index.js";
import { restoreTotals } from "./totals.js";
import { poll } from "./poll.js";
import type { OperationsSource, PollOptions, PollResult } from "./poll-types.js";
import type { OperationSnapshot } from "./transitions.js";

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
  | {
      readonly kind: "committed";
      readonly result: PollResult;
      /** New alerts the full outbox had no room for. */
      readonly dropped: readonly OutboxEntry[];
      /** New spans the full span queue had no room for (none when absent). */
      readonly droppedSpans?: number;
    }
  | { readonly kind: "blocked"; readonly error: StateFileError }
  | { readonly kind: "poll_failed"; readonly error: unknown }
  | { readonly kind: "commit_failed"; readonly error: unknown; readonly result: PollResult };

/** What an outbox update leaves behind. */
export interface OutboxChange {
  readonly outbox: OutboxEntry[];
  readonly deadLetters: DeadLetter[];
  /** The firing set, when the change touches it (an Alertmanager sink's). */
  readonly firing?: FiringAlert[];
  /** The platform incidents' record, when the change touches it (undefined: none left). */
  readonly incidents?: IncidentRecord | undefined;
  /** The span queue and its dead letters, when the change touches them (the span export's). */
  readonly spanQueue?: { readonly queue: QueuedSpan[]; readonly deadLetters: SpanDeadLetter[] };
}

export class ProjectSync {
  private current: ProjectStatus = { kind: "unloaded" };
  /**
   * The tail of the queue of commits; each waits for the one before. It settles with nothing:
   * holding the last commit's outcome would keep its poll's transitions (a catch-up's every
   * operation) in memory until the next commit.
   */
  private commits: Promise<void> = Promise.resolve();

  constructor(
    readonly projectId: string,
    private readonly store: StateStore,
    private readonly source: OperationsSource,
    private readonly outboxLimit?: number,
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

  /** Polls once with `options` (the caller's of the moment) and commits what it found. */
  async step(nowMs: number, options: PollOptions, signal?: AbortSignal): Promise<StepOutcome> {
    const status = await this.load();
    if (status.kind === "blocked") return { kind: "blocked", error: status.error };
    const previous = status.kind === "ready" ? status.state : undefined;

    let result: PollResult;
    try {
      result = await poll(this.source, this.projectId, previous, nowMs, options, signal);
    } catch (error) {
      return { kind: "poll_failed", error };
    }
    // An abort after the walk must not commit: shutdown abandons the poll whole.
    if (signal?.aborted === true) return { kind: "poll_failed", error: signal.reason };
    return this.serially(async (): Promise<StepOutcome> => {
      const latest = this.state;
      const { outbox, dropped } = addToOutbox(
        latest?.outbox ?? [],
        result.alerts,
        this.outboxLimit,
      );
      // The export takes spans from the queue between polls: the poll's go onto the latest.
      const spans = addToSpanQueue(
        latest?.spans ?? [],
        result.spans.map((span) => ({ span, queuedAtMs: nowMs })),
      );
      const state: ProjectState = withIncidents(
        withFiring(
          withSpans(
            {
              ...result.state,
              sequence: (latest?.sequence ?? 0) + 1,
              outbox,
              deadLetters: latest?.deadLetters ?? [],
            },
            { queue: spans.queue, deadLetters: latest?.spanDeadLetters ?? [] },
          ),
          // Deliveries change the firing set between polls: the latest one is kept.
          latest?.firing ?? [],
        ),
        // So do the incidents' carriers; the poll adds its failures' marks.
        (result.incidentMarks ?? []).length === 0
          ? latest?.incidents
          : withIncidentMarks(latest?.incidents, result.incidentMarks ?? [], nowMs),
      );
      try {
        // The operations it counts go along, for a store that archives them.
        const ended: OperationSnapshot[] = [];
        for (const t of result.transitions) if (t.kind === "ended") ended.push(t.op);
        await this.store.commit(state, { ended });
      } catch (error) {
        return { kind: "commit_failed", error, result };
      }
      this.current = { kind: "ready", state };
      return {
        kind: "committed",
        result: { ...result, state },
        dropped,
        droppedSpans: spans.dropped.length,
      };
    });
  }

  /**
   * Changes the outbox and dead letters of the committed state (deliveries acknowledged, alerts
   * given up on) in one commit. Resolves false when there is no committed state to change.
   * Rejects when the commit fails; the committed state is then unchanged.
   */
  async updateOutbox(
    nowMs: number,
    change: (state: ProjectState) => OutboxChange,
  ): Promise<boolean> {
    return this.serially(async () => {
      const latest = this.state;
      if (latest === undefined) return false;
      const changed = change(latest);
      const { firing, incidents: _incidents, spanQueue, ...lists } = changed;
      const next: ProjectState = withIncidents(
        withFiring(
          withSpans(
            { ...latest, ...lists, sequence: latest.sequence + 1, committedAtMs: nowMs },
            spanQueue ?? { queue: latest.spans ?? [], deadLetters: latest.spanDeadLetters ?? [] },
          ),
          firing ?? latest.firing ?? [],
        ),
        "incidents" in changed ? changed.incidents : latest.incidents,
      );
      await this.store.commit(next);
      this.current = { kind: "ready", state: next };
      return true;
    });
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.commits.then(work, work);
    this.commits = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }
}

/** The state with `incidents` as its incidents' record (absent when there is none). */
function withIncidents(state: ProjectState, incidents: IncidentRecord | undefined): ProjectState {
  const { incidents: _previous, ...rest } = state;
  return incidents === undefined ? rest : { ...rest, incidents };
}

/** The state with its span queue and span dead letters (each absent when empty). */
function withSpans(
  state: ProjectState,
  spans: { readonly queue: readonly QueuedSpan[]; readonly deadLetters: readonly SpanDeadLetter[] },
): ProjectState {
  const { spans: _queue, spanDeadLetters: _dead, ...rest } = state;
  return {
    ...rest,
    ...(spans.queue.length === 0 ? {} : { spans: [...spans.queue] }),
    ...(spans.deadLetters.length === 0 ? {} : { spanDeadLetters: [...spans.deadLetters] }),
  };
}

/** The state with `firing` as its firing set (absent when empty, as the document has it). */
function withFiring(state: ProjectState, firing: readonly FiringAlert[]): ProjectState {
  const { firing: _previous, ...rest } = state;
  return firing.length === 0 ? rest : { ...rest, firing: [...firing] };
}
