/**
 * The operations archive (`history: postgres`): end-state operations upserted into the
 * `pgcp_operations` table in the same transaction as the state commit that counts them.
 */
export { archiveRows, upsertOperations, type ArchiveRow } from "./operations-archive.js";
