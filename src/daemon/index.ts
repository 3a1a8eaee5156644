/**
 * The running exporter's engine, given each account's API client and the state store:
 * `daemon.ts` polls the watched projects on each account's scheduler and delivers their alerts;
 * `project-roster.ts` keeps each watched project's sync, account, lease token and poll in
 * flight; `step-effects.ts` decides what a poll leads to (reports, log lines, deliveries, the
 * scheduler's view); `discovery-loop.ts` runs discovery again every interval;
 * `account-discovery.ts` lists an account's projects (`all`, organisations);
 * `project-owners.ts` picks the one account that watches each project; `departures.ts` keeps the
 * series of projects no longer found for a grace period; `store-backend.ts` says where the state
 * lives and whether projects are shared through leases; `transition-log.ts` picks which
 * transitions get a log line of their own; `bounded.ts` is a bounded `forEach`. The observer
 * interface it reports through is `sync/observer.ts`, below every part that listens.
 */
export * from "./daemon.js";
export type { StoreBackend } from "./store-backend.js";
export { broadcast, type DaemonObserver } from "../sync/index.js";
