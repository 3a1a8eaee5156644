/**
 * The running exporter: wiring of client, store, syncs, scheduler and observers (`daemon.ts`),
 * the observer interface through which metrics, logs and the status page follow it (defined in
`sync/observer.ts`, below them all, and re-exported here), which of a
 * poll's transitions get a log line of their own (`transition-log.ts`), and a bounded
 * `forEach` for polling and loading many projects (`bounded.ts`).
 */
export * from "./daemon.js";
export { broadcast, type DaemonObserver } from "../sync/index.js";
