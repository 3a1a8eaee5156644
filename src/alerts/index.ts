/**
 * Alerts: the rules that turn transitions into alerts and route them to sinks (`rules.ts`), the
 * compute probe's advice as an alert (`advice.ts`), platform incidents (failures of one action in
 * one region across many projects: the pure rules in `incidents.ts`, the desk that tells the sinks
 * in `incident-desk.ts`), the notifier that drains the durable outboxes (`notifier.ts`, deciding
 * with `delivery-plan.ts`), the sinks (Slack, webhook, PagerDuty, Alertmanager), and when a
 * silence's window is open (`silence-window.ts`, over the wall clocks of `zone-clock.ts`). The
 * alert record and the outbox's bookkeeping are part of the state document, in `store/`.
 */
export * from "./alert.js";
export * from "./rules.js";
export * from "./delivery-plan.js";
export { isActive, windowState, type WindowState } from "./silence-window.js";
export { formatWall } from "./zone-clock.js";
export {
  Notifier,
  type NotifierObserver,
  type NotifierOptions,
  type OutboxOwner,
} from "./notifier.js";
export { alertHook, alertRouter, createSinks } from "./setup.js";
export { withNames } from "./names.js";
export * from "./incidents.js";
export { IncidentDesk, type IncidentDeskOptions } from "./incident-desk.js";
export { INCIDENT_HOLD } from "./setup.js";
export { adviceAlert, adviceSummary, type AdviceInput } from "./advice.js";
