/**
 * Durable state: the `StateStore` interface, the project-state document it stores, and the
 * default store (one JSON file per project, written atomically). Holds no sync logic.
 */
export * from "./state-store.js";
export * from "./project-state.js";
export { FileStateStore, parseState } from "./file-store.js";
