/**
 * The running exporter's engine, given each account's API client and the state store:
 * `daemon.ts` runs the parts that `assembly.ts` builds in order, as components with a lifecycle
 * (`component.ts`: started in one declared order, stopped in reverse, a reload one pass over the
 * list). The parts: `lease-share.ts` (the lease manager: this replica's share of the projects,
 * fencing), `project-roster.ts` (each watched project's sync, account, lease token and poll in
 * flight), `delivery.ts` (the notifier), `account-runner.ts` (each account's client and
 * scheduler polling its projects and listing their endpoints, with what the API refuses;
 * `base-url-check.ts` tells its wrong base URL from a project's 404), `watched-projects.ts`
 * (which projects are watched, under which account; their states loaded) and
 * `project-discovery.ts` (what the accounts list and discover, again every interval with
 * `discovery-loop.ts` and `account-discovery.ts`). `step-effects.ts` decides what a poll leads
 * to, purely, and `apply-effects.ts` carries it out; `transition-log.ts` picks which transitions
 * get a log line of their own; `project-owners.ts` picks the one account that watches each
 * project; `departures.ts` keeps the series of projects no longer found for a grace period;
 * `store-backend.ts` says where the state lives; `bounded.ts` is a bounded `forEach`;
 * `fleet-directory.ts` keeps what is read of the projects' names,
 * organisations and branches, shown beside their ids. The observer interface it reports
 * through is `sync/observer.ts`.
 */
export * from "./daemon.js";
export type { AccountClient, DaemonDependencies } from "./assembly.js";
export { pollOptionsFrom } from "./assembly.js";
export type { DaemonAccount, KeyRefusal } from "./account-runner.js";
export type { StoreBackend } from "./store-backend.js";
export { broadcast, type DaemonObserver } from "../sync/index.js";
