/**
 * What a poll's commit carries besides the project's state document: the operations whose
 * arrival at an end status the commit counts. A store that keeps an operations archive writes
 * them in the same atomic step as the state (so the archive agrees with the counters); the file
 * store ignores them.
 */
import type { OperationSnapshot } from "./operation-snapshot.js";

/**
 * An operation as the poll read it when it counted an arrival at an end status. Its status is
 * the record's when read: a failure inferred from `failuresCount` may be seen only once the
 * operation has moved on.
 */
export type EndedOperation = OperationSnapshot;

export interface CommitDetails {
  /** Operations whose end-status arrivals this commit counts (several entries may name one). */
  readonly ended: readonly EndedOperation[];
}
