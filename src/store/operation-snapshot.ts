/**
 * What the sync engine knows about one operation it has seen: enough to tell what changed the
 * next time the record is read, and to render it in alerts. Times are epoch milliseconds.
 */
export interface OperationSnapshot {
  readonly id: string;
  readonly projectId: string;
  readonly branchId: string | undefined;
  readonly endpointId: string | undefined;
  readonly action: string;
  readonly status: string;
  readonly failuresCount: number;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
  /** Milliseconds from creation to the current status, as the API reports or derived. */
  readonly durationMs: number;
  readonly error: string | undefined;
}
