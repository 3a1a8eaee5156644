/**
 * The running exporter's engine, given its API client and state store: `daemon.ts` polls the
 * watched projects on the scheduler's plan and delivers their alerts; `project-roster.ts` keeps
 * each watched project's sync, lease token and poll in flight; `step-effects.ts` decides what a
 * poll leads to (reports, log lines, deliveries, the scheduler's view); `discovery-loop.ts`
 * runs `projects: all`; `store-backend.ts` says where the state lives and whether projects are
 * shared through leases; `transition-log.ts` picks which transitions get a log line of their
 * own; `bounded.ts` is a bounded `forEach`. The observer interface it reports through is
 * `sync/observer.ts`, below every part that listens.
 */
export * from "./daemon.js";
export type { StoreBackend } from "./store-backend.js";
export { broadcast, type DaemonObserver } from "../sync/index.js";
