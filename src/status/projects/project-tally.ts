/**
 * The one pass over the shown projects that the page's counts and rows come from: each project's
 * health, the totals (open and stuck operations, recent failures, pending alerts, dead letters,
 * computes), the outbox's tally, and each project's rank (problems first). What a project's
 * committed state says is summarised once per state object, so an unchanged project costs a
 * lookup.
 */
import {
  OutboxTally,
  outboxOf,
  type DeadLetterView,
  type SinkStatus,
} from "../alerts/outbox-status.js";
import type { StatusLimits } from "../shared/limits.js";
import type { StatusSource } from "../shared/source.js";
import type { Clean } from "../shared/text.js";
import { openOperationsOf, type OpenOperations } from "./open-operations.js";
import {
  healthOf,
  type ProjectFacts,
  type ProjectHealth,
  type TrackedProject,
} from "./project-rows.js";

export interface StatusCounts {
  readonly projects: number;
  readonly health: Readonly<Record<ProjectHealth, number>>;
  readonly open: number;
  readonly stuck: number;
  /** Projects with a failure younger than `recentFailureMs`. */
  readonly recentlyFailing: number;
  readonly pending: number;
  readonly deadLetters: number;
  /** Computes whose latest probe failed. */
  readonly computesFailing: number;
  /** Computes for which a larger compute is advised. */
  readonly computesAdvised: number;
}

/** What the tally reads: the projects, what the tracker remembers of them, the configured sinks. */
export interface TallySources {
  readonly source: StatusSource;
  readonly tracker: { get(projectId: string): TrackedProject | undefined };
  /** Names and kinds only. */
  readonly sinks: readonly { readonly name: string; readonly kind: string }[];
}

/** What one pass over the shown projects adds up. */
export interface ProjectTally {
  readonly counts: StatusCounts;
  /** The compute probe knows of some compute of theirs. */
  readonly computesProbed: boolean;
  readonly sinks: SinkStatus[];
  /** The most recent dead letters, newest first. */
  readonly deadLetters: DeadLetterView[];
  /** The projects by rank (problems first), each in the daemon's order. */
  readonly ranked: readonly (readonly { id: string; project: ProjectFacts }[])[];
}

/** One pass over the shown projects: their health, totals, sinks, newest dead letters, ranks. */
export function tallyProjects(
  ids: readonly string[],
  sources: TallySources,
  limits: StatusLimits,
  now: number,
  clean: Clean,
): ProjectTally {
  const { source, tracker } = sources;
  const health: Record<ProjectHealth, number> = {
    blocked: 0,
    poll_failing: 0,
    catching_up: 0,
    waiting: 0,
    ok: 0,
  };
  let open = 0;
  let stuck = 0;
  let recentlyFailing = 0;
  let pending = 0;
  let deadLetters = 0;
  let computesProbed = false;
  let computesFailing = 0;
  let computesAdvised = 0;
  const outboxes = new OutboxTally(sources.sinks, limits, clean);

  // Rows by rank (problems first), each in the daemon's order; only `projectRows` are built.
  const RANKS = 6;
  const ranked: { id: string; project: ProjectFacts }[][] = Array.from({ length: RANKS }, () => []);
  for (const id of ids) {
    const project = source.get(id);
    const state = project?.state;
    const tracked = tracker.get(id);
    const facts = {
      project,
      state,
      tracked,
      open: openOperationsOf(state, limits),
      outbox: outboxOf(state, limits),
    };
    const h = healthOf(facts);
    health[h] += 1;
    open += facts.open.openCount;
    stuck += facts.open.stuckCount;
    pending += facts.outbox.pending;
    deadLetters += facts.outbox.deadLetters;
    for (const compute of project?.computes?.values() ?? []) {
      computesProbed = true;
      if (compute.up === false) computesFailing += 1;
      if (compute.advised.length > 0) computesAdvised += 1;
    }
    const newestFailure = tracked?.failures[0];
    const failedRecently =
      newestFailure !== undefined && now - newestFailure.detectedAtMs < limits.recentFailureMs;
    if (failedRecently) recentlyFailing += 1;
    outboxes.add(id, project, facts.outbox);
    ranked[rankOf(h, facts.open, failedRecently)]?.push({ id, project: facts });
  }

  return {
    counts: {
      projects: ids.length,
      health,
      open,
      stuck,
      recentlyFailing,
      pending,
      deadLetters,
      computesFailing,
      computesAdvised,
    },
    computesProbed,
    sinks: outboxes.sinks(),
    deadLetters: outboxes.deadLetters(),
    ranked,
  };
}

/**
 * Where a project's row stands: blocked, failing, stuck or failed lately, catching up, waiting, ok.
 */
function rankOf(h: ProjectHealth, open: OpenOperations, failedRecently: boolean): number {
  if (h === "blocked") return 0;
  if (h === "poll_failing") return 1;
  if (open.stuckCount > 0 || failedRecently) return 2;
  if (h === "catching_up") return 3;
  if (h === "waiting") return 4;
  return 5;
}
