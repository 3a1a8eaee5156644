/**
 * The alert outbox as the page shows it: what one committed state holds (pending alerts by sink,
 * dead letters), summarised once per state object (states are immutable and replaced on every
 * commit), and the tally over the shown projects: each sink's pending alerts and dead letters,
 * and the most recent dead letters.
 */
import type { DeadLetter, ProjectState } from "../../store/index.js";
import type { ProjectView } from "../../sync/index.js";
import type { StatusLimits } from "../shared/limits.js";
import { NewestFirst } from "../shared/newest-first.js";
import { nameOrUndefined, type Clean } from "../shared/text.js";

export interface SinkStatus {
  readonly name: string;
  /** Undefined for a sink that is not configured (any more) but still has pending alerts. */
  readonly kind: string | undefined;
  readonly pending: number;
  readonly oldestPendingMs: number | undefined;
  readonly deadLetters: number;
}

export interface DeadLetterView {
  readonly projectId: string;
  /** The project's name, once known. */
  readonly projectName: string | undefined;
  readonly sink: string;
  readonly reason: string;
  readonly atMs: number;
  readonly alertKind: string;
  readonly operationId: string;
  readonly action: string;
  readonly status: string;
}

/** What one committed state holds of the outbox, computed once per state object. */
export interface OutboxSummary {
  /** Outbox entries still pending for some sink. */
  readonly pending: number;
  readonly pendingBySink: ReadonlyMap<string, { count: number; oldestMs: number }>;
  readonly deadLetters: number;
  readonly deadBySink: ReadonlyMap<string, number>;
  /** The newest dead letters, newest first (at most the limit shown). */
  readonly recentDead: readonly DeadLetter[];
}

const summaries = new WeakMap<ProjectState, OutboxSummary>();
const EMPTY_SUMMARY: OutboxSummary = {
  pending: 0,
  pendingBySink: new Map(),
  deadLetters: 0,
  deadBySink: new Map(),
  recentDead: [],
};

export function outboxOf(state: ProjectState | undefined, limits: StatusLimits): OutboxSummary {
  if (state === undefined) return EMPTY_SUMMARY;
  const cached = summaries.get(state);
  if (cached !== undefined) return cached;
  const pendingBySink = new Map<string, { count: number; oldestMs: number }>();
  for (const entry of state.outbox) {
    for (const sink of entry.pending) {
      const s = pendingBySink.get(sink);
      if (s === undefined) pendingBySink.set(sink, { count: 1, oldestMs: entry.createdAtMs });
      else {
        s.count += 1;
        s.oldestMs = Math.min(s.oldestMs, entry.createdAtMs);
      }
    }
  }
  const deadBySink = new Map<string, number>();
  for (const d of state.deadLetters) deadBySink.set(d.sink, (deadBySink.get(d.sink) ?? 0) + 1);
  const summary: OutboxSummary = {
    pending: state.outbox.length,
    pendingBySink,
    deadLetters: state.deadLetters.length,
    deadBySink,
    // Dead letters are appended: the newest are at the end.
    recentDead: state.deadLetters.slice(-limits.deadLettersShown).reverse(),
  };
  summaries.set(state, summary);
  return summary;
}

/** A sink's pending alerts and dead letters, added up over the projects. */
interface SinkTally {
  kind: string | undefined;
  pending: number;
  oldestMs: number;
  dead: number;
}

/**
 * Adds up the outboxes of the projects shown, one project at a time: each sink's pending alerts
 * (the configured sinks first, then any other that still has some) and dead letters, and the most
 * recent dead letters of all.
 */
export class OutboxTally {
  readonly #sinks = new Map<string, SinkTally>();
  readonly #recentDead: NewestFirst<DeadLetterView>;
  readonly #clean: Clean;

  constructor(
    sinks: readonly { readonly name: string; readonly kind: string }[],
    limits: StatusLimits,
    clean: Clean,
  ) {
    for (const s of sinks) {
      this.#sinks.set(s.name, { kind: s.kind, pending: 0, oldestMs: Infinity, dead: 0 });
    }
    this.#recentDead = new NewestFirst<DeadLetterView>(limits.deadLettersShown);
    this.#clean = clean;
  }

  add(projectId: string, project: ProjectView | undefined, outbox: OutboxSummary): void {
    for (const [name, p] of outbox.pendingBySink) {
      const s = this.#sink(name);
      s.pending += p.count;
      s.oldestMs = Math.min(s.oldestMs, p.oldestMs);
    }
    for (const [name, count] of outbox.deadBySink) this.#sink(name).dead += count;
    for (const d of outbox.recentDead) {
      if (!this.#recentDead.wants(d.atMs)) break;
      this.#recentDead.add(d.atMs, {
        projectId,
        projectName: nameOrUndefined(project?.info?.name, this.#clean),
        sink: d.sink,
        reason: this.#clean(d.reason),
        atMs: d.atMs,
        alertKind: d.alert.kind,
        operationId: d.alert.operationId,
        action: d.alert.action,
        status: d.alert.status,
      });
    }
  }

  sinks(): SinkStatus[] {
    return [...this.#sinks].map(([name, s]) => ({
      name,
      kind: s.kind,
      pending: s.pending,
      oldestPendingMs: s.pending > 0 ? s.oldestMs : undefined,
      deadLetters: s.dead,
    }));
  }

  /** The most recent dead letters, newest first. */
  deadLetters(): DeadLetterView[] {
    return this.#recentDead.items();
  }

  #sink(name: string): SinkTally {
    let s = this.#sinks.get(name);
    if (s === undefined) {
      s = { kind: undefined, pending: 0, oldestMs: Infinity, dead: 0 };
      this.#sinks.set(name, s);
    }
    return s;
  }
}
