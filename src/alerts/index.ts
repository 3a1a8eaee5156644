/**
 * Alerts: the rules that turn transitions into alerts and route them to sinks (`rules.ts`),
 * the durable outbox's bookkeeping (`outbox.ts`), the notifier that drains it
 * (`notifier.ts`, deciding with `delivery-plan.ts`), and the Slack and webhook sinks.
 */
export * from "./alert.js";
export * from "./rules.js";
export * from "./outbox.js";
export * from "./delivery-plan.js";
export {
  Notifier,
  type NotifierObserver,
  type NotifierOptions,
  type OutboxOwner,
} from "./notifier.js";
export { alertHook, createSinks } from "./setup.js";
