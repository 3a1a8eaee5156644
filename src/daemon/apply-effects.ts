/**
 * Carries out what a poll led to (`stepEffects` decides it, purely): tells the observers, logs
 * its lines and transitions, and reports a commit the store fenced.
 */
import type { Logger } from "../logger.js";
import type { LeaseLostError } from "../store/fencing.js";
import type { DaemonObserver } from "../sync/index.js";
import type { PollOutcome } from "../scheduler/index.js";
import type { StepEffects } from "./step-effects.js";
import { ENDINGS_LOGGED_EACH, transitionFields, type TransitionLog } from "./transition-log.js";

export interface EffectTargets {
  readonly notify: Required<DaemonObserver>;
  readonly logger: Logger;
  /** A commit was fenced: this replica no longer holds the project (`fencedCommits`). */
  readonly fenced: (projectId: string, error: LeaseLostError, what: string) => void;
}

/** Returns what carries a poll's effects out, and hands the scheduler what it learns. */
export function effectsApplier(
  targets: EffectTargets,
): (projectId: string, effects: StepEffects) => PollOutcome {
  const { notify, logger: log } = targets;
  return (projectId, effects) => {
    for (const report of effects.reports) {
      switch (report.event) {
        case "committed":
          notify.committed(projectId, report.result, report.durationSeconds);
          break;
        case "alertsDropped":
          notify.alertsDropped(projectId, report.count);
          break;
        case "spansDropped":
          notify.spansDropped(projectId, report.count);
          break;
        case "blocked":
          notify.blocked(projectId, report.error);
          break;
        case "pollFailed":
          notify.pollFailed(projectId, report.error, report.durationSeconds);
          break;
        case "commitFailed":
          notify.commitFailed(projectId, report.error);
          break;
      }
    }
    if (effects.transitions !== undefined) logTransitions(log, projectId, effects.transitions);
    for (const line of effects.logs) log[line.level](line.fields, line.message);
    if (effects.leaseLost !== undefined) {
      targets.fenced(projectId, effects.leaseLost, "state commit");
    }
    return effects.job;
  };
}

function logTransitions(log: Logger, projectId: string, plan: TransitionLog): void {
  for (const t of plan.each) log.info(transitionFields(projectId, t), `operation ${t.kind}`);
  if (plan.summary === undefined) return;
  log.info(
    { project: projectId, ...plan.summary },
    `${plan.summary.ended} operations ended (one line for more than ${ENDINGS_LOGGED_EACH} in a poll; each at debug)`,
  );
  if (log.isLevelEnabled("debug")) {
    for (const t of plan.summarised) {
      log.debug(transitionFields(projectId, t), `operation ${t.kind}`);
    }
  }
}
