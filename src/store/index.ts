/**
 * Durable state: the `StateStore` interface, the project-state document it stores, what that
 * document is made of (the operation snapshot, the alert record, the bookkeeping of the outbox and
 * of the firing set, the platform incidents' record, the
 * span queue of the OpenTelemetry export) and the one check every store reads it back
 * with, the default store (one JSON file per project, written atomically, in a directory that one
 * process at a time locks), the operations archive the Postgres store keeps, and how a store's URL
 * is shown without credentials. Holds no sync logic.
 */
export * from "./state-store.js";
export * from "./project-state.js";
export * from "./state-document.js";
export {
  FileStateStore,
  parseState,
  stateDirectoryProblem,
  type FileStateStoreOptions,
} from "./file-store.js";
export * from "./state-dir-lock.js";
export * from "./alert-record.js";
export * from "./operation-snapshot.js";
export * from "./outbox.js";
export * from "./firing.js";
export * from "./incident-record.js";
export * from "./span-record.js";
export * from "./span-queue.js";
export * from "./commit-details.js";
export * from "./display-url.js";
