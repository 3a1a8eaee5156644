/**
 * The sync engine: turns a project's newest-first, cursor-paged, mutable operations log into
 * an exact stream of transitions and the next state to commit. `tracker.ts` holds the pure
 * accounting rules, `walk.ts` the cursor walk and the checks of its answers, `record-bounds.ts`
 * what is kept of a record, `poll.ts` one poll (its contract in `poll-types.ts`; the walk's
 * bounds and checkpoint in `checkpoint.ts`, the follow-ups in `follow.ts`, the alerts it raises
 * in `poll-alerts.ts`, the attempts that ended in `attempts.ts`), and
 * `project-sync.ts` the load-poll-commit step. `observer.ts` is what the daemon reports as it
 * runs, and `project-views.ts` what those reports say of each project's health, shared by the
 * metrics and the status page; `compute-views.ts` is what the compute probe reports of each
 * endpoint's compute; `fleet-names.ts` the names shown beside ids (projects, branches).
 */
export * from "./transitions.js";
export * from "./tracker.js";
export * from "./totals.js";
export * from "./position.js";
export * from "./attempts.js";
export { poll } from "./poll.js";
export type {
  AlertContext,
  AlertedTo,
  OperationsSource,
  PollOptions,
  PollResult,
  RoutedAlerts,
  SilencedAlert,
  SpanContext,
} from "./poll-types.js";
export * from "./project-sync.js";
export { WalkError, type WalkErrorKind, type WalkAnomalyKind } from "./walk.js";
export { ANOMALY_MEANING, type AnomalyCount, type AnomalyKind } from "./anomalies.js";
export { MAX_ERROR_LENGTH, OTHER_VALUE } from "./record-bounds.js";
export * from "./observer.js";
export * from "./project-views.js";
export * from "./compute-views.js";
export * from "./fleet-names.js";
