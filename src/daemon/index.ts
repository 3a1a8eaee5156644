/**
 * The running exporter: wiring of client, store, syncs, scheduler and observers (`daemon.ts`),
 * and the observer interface through which metrics, logs and the status page follow it.
 */
export * from "./daemon.js";
export * from "./observer.js";
