/**
 * Alerts, in three rooms (a room imports only the rooms before it):
 *
 * - `rules/`: pure decisions: the rules that turn transitions into alerts and route them to
 *   sinks (`rules.ts`), the compute probe's advice as an alert (`advice.ts`), platform incidents
 *   (failures of one action in one region across many projects, `incidents.ts`, and the span of
 *   one that resolved, `incident-span.ts`), names beside ids (`names.ts`), and when a silence's
 *   window is open (`silence-window.ts`, over the wall clocks of `zone-clock.ts`);
 * - `sinks/`: the integrations (Slack, webhook, PagerDuty, Alertmanager), each one attempt per
 *   call, and what a sink is (`sink.ts`);
 * - `pipeline/`: from intake to settlement: the one way in (`intake.ts`: name → route → hold →
 *   enqueue), the incident ledger deciding which failures join an incident and the desk telling
 *   the sinks of each incident, and the notifier draining the durable outboxes through one lane
 *   per sink (`notifier.ts`, `sink-lane.ts`, the stages of `lane-stages.ts`, deciding with
 *   `delivery-plan.ts`).
 *
 * `setup.ts` builds the sinks from the configuration. The alert record and the outbox's bookkeeping
 * are part of the state document, in `store/`.
 */
export * from "./sinks/sink.js";
export * from "./rules/rules.js";
export * from "./pipeline/delivery-plan.js";
export { isActive, windowState, type WindowState } from "./rules/silence-window.js";
export { formatWall } from "./rules/zone-clock.js";
export {
  Notifier,
  type NotifierObserver,
  type NotifierOptions,
  type OutboxOwner,
} from "./pipeline/notifier.js";
export { createSinks } from "./setup.js";
export { withNames } from "./rules/names.js";
export * from "./rules/incidents.js";
export * from "./rules/incident-span.js";
export { IncidentDesk, type IncidentDeskOptions } from "./pipeline/incident-desk.js";
export { IncidentLedger, type IncidentLedgerOptions } from "./pipeline/incident-ledger.js";
export {
  AlertIntake,
  INCIDENT_HOLD,
  intakeSettings,
  type Enqueue,
  type IntakeOptions,
  type IntakeSettings,
} from "./pipeline/intake.js";
export { adviceAlert, adviceSummary, type AdviceInput } from "./rules/advice.js";
