/**
 * Alerts: the rules that turn transitions into alerts and route them to sinks (`rules.ts`),
 * the notifier that drains the durable outboxes (`notifier.ts`, deciding with
 * `delivery-plan.ts`), and the Slack and webhook sinks. The alert record and the outbox's
 * bookkeeping are part of the state document, in `store/`.
 */
export * from "./alert.js";
export * from "./rules.js";
export * from "./delivery-plan.js";
export {
  Notifier,
  type NotifierObserver,
  type NotifierOptions,
  type OutboxOwner,
} from "./notifier.js";
export { alertHook, createSinks } from "./setup.js";
