/**
 * Durable state: the `StateStore` interface, the project-state document it stores, and the
 * default store (one JSON file per project, written atomically, in a directory that one process
 * at a time locks). Holds no sync logic.
 */
export * from "./state-store.js";
export * from "./project-state.js";
export { FileStateStore, parseState, type FileStateStoreOptions } from "./file-store.js";
export * from "./state-dir-lock.js";
