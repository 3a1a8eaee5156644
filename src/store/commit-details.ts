/**
 * What a poll's commit carries besides the project's state document: the operations whose
 * arrival at an end status the commit counts. A store that keeps an operations archive writes
 * them in the same atomic step as the state (so the archive agrees with the counters); the file
 * store ignores them.
 */

/** An operation as the poll read it when it counted an arrival at an end status. */
export interface EndedOperation {
  readonly id: string;
  readonly projectId: string;
  readonly branchId: string | undefined;
  readonly endpointId: string | undefined;
  readonly action: string;
  /** The record's status when it was read (a failure inferred from `failuresCount` may be seen only once the operation has moved on). */
  readonly status: string;
  readonly failuresCount: number;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
  readonly durationMs: number;
  readonly error: string | undefined;
}

export interface CommitDetails {
  /** Operations whose end-status arrivals this commit counts (several entries may name one). */
  readonly ended: readonly EndedOperation[];
}
