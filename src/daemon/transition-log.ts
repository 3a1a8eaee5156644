/**
 * Which of a poll's transitions get a log line of their own at info, and what it says. Every failure, retry,
 * stuck operation and recovery does. Operations that ended otherwise (finished, cancelled,
 * skipped) do too, unless one poll brings more than `limit` of them, as a catch-up or a
 * backfill does: then they are counted in one summary line, and logged one by one at debug.
 */
import type { Transition } from "../sync/index.js";

/** Successful endings one poll logs one by one at info; beyond, a summary. */
export const ENDINGS_LOGGED_EACH = 100;

export interface EndingsSummary {
  readonly ended: number;
  readonly statuses: Readonly<Record<string, number>>;
  readonly actions: Readonly<Record<string, number>>;
}

export interface TransitionLog {
  /** Transitions logged one by one at info. */
  readonly each: readonly Transition[];
  /** Endings counted in one summary line instead (and logged one by one at debug). */
  readonly summarised: readonly Transition[];
  readonly summary: EndingsSummary | undefined;
}

/** Transitions an operator looks for one by one, however many there are. */
function alwaysEach(t: Transition): boolean {
  return t.kind !== "ended" || t.status === "failed" || t.status === "error";
}

export function planTransitionLog(
  transitions: readonly Transition[],
  limit = ENDINGS_LOGGED_EACH,
): TransitionLog {
  const each: Transition[] = [];
  const endings: Transition[] = [];
  for (const t of transitions) {
    if (!logged(t)) continue;
    if (alwaysEach(t)) each.push(t);
    else endings.push(t);
  }
  if (endings.length <= limit) {
    // In their order: the poll's own.
    return {
      each: endings.length === 0 ? each : transitions.filter(logged),
      summarised: [],
      summary: undefined,
    };
  }
  const statuses: Record<string, number> = {};
  const actions: Record<string, number> = {};
  for (const t of endings) {
    const status = t.kind === "ended" ? t.status : t.op.status;
    statuses[status] = (statuses[status] ?? 0) + 1;
    actions[t.op.action] = (actions[t.op.action] ?? 0) + 1;
  }
  return { each, summarised: endings, summary: { ended: endings.length, statuses, actions } };
}

function logged(t: Transition): boolean {
  return t.kind !== "new" && t.kind !== "status_changed";
}

/**
 * The fields of one transition's log line. An ending names the status it arrived at, which is
 * not always the operation's status now: a failure inferred between two polls (from its
 * failures count, the operation retried and running or finished since) is logged as `failed`,
 * with the arrivals it stands for (`count`) and the status seen now (`now`).
 */
export function transitionFields(
  projectId: string,
  t: Transition,
): Record<string, string | number> {
  const fields = {
    project: projectId,
    operation: t.op.id,
    action: t.op.action,
    status: t.kind === "ended" ? t.status : t.op.status,
    transition: t.kind,
  };
  if (t.kind !== "ended") return fields;
  return {
    ...fields,
    ...(t.count > 1 ? { count: t.count } : {}),
    ...(t.status !== t.op.status ? { now: t.op.status } : {}),
  };
}
