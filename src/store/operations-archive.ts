/**
 * The operations archive (`history: postgres`): every operation that reaches an end status is
 * kept in the `pgcp_operations` table, one row per operation, because the service deletes
 * operations after six months and tells its users to keep their own history.
 *
 * What is archived is what the sync engine counts: the operations of a commit's `ended`
 * transitions whose record, as read, is in an end status. The rows are upserted in the same
 * transaction as the project's state commit, so the archive holds an operation exactly when
 * the committed counters count its arrival, with no outbox of its own: a poll that fails or is
 * fenced writes neither, a repeated poll writes the same rows again (an upsert that changes
 * nothing), and a restart or a takeover continues from the committed checkpoint.
 *
 * A later end status of the same operation (a failed operation retried and finished) replaces
 * the row; a row is never replaced by an older read of its record.
 */
import type { ClientBase } from "pg";
import { isEndStatus } from "../contract/index.js";
import type { EndedOperation } from "./commit-details.js";

/** One row of `pgcp_operations`, as sent to the database (times in epoch milliseconds). */
export interface ArchiveRow {
  readonly project_id: string;
  readonly operation_id: string;
  readonly branch_id: string | null;
  readonly endpoint_id: string | null;
  readonly action: string;
  readonly status: string;
  readonly failures_count: number;
  readonly error: string | null;
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
  readonly total_duration_ms: number;
}

/**
 * The rows for a commit's ended operations: those whose record is in an end status, one per
 * operation (the most recent read; one upsert may not touch a row twice).
 */
export function archiveRows(ended: readonly EndedOperation[]): ArchiveRow[] {
  const rows = new Map<string, ArchiveRow>();
  for (const op of ended) {
    if (!isEndStatus(op.status)) continue;
    const key = `${op.projectId}\n${op.id}`;
    const before = rows.get(key);
    if (before !== undefined && !newer(op, before)) continue;
    rows.set(key, {
      project_id: op.projectId,
      operation_id: op.id,
      branch_id: op.branchId ?? null,
      endpoint_id: op.endpointId ?? null,
      action: op.action,
      status: op.status,
      failures_count: op.failuresCount,
      error: op.error ?? null,
      created_at_ms: op.createdAtMs,
      updated_at_ms: op.updatedAtMs,
      total_duration_ms: Math.max(0, Math.round(op.durationMs)),
    });
  }
  return [...rows.values()];
}

function newer(op: EndedOperation, row: ArchiveRow): boolean {
  if (op.updatedAtMs !== row.updated_at_ms) return op.updatedAtMs > row.updated_at_ms;
  return op.failuresCount >= row.failures_count;
}

const UPSERT = `
  INSERT INTO pgcp_operations AS o (
    project_id, operation_id, branch_id, endpoint_id, action, status, failures_count, error,
    created_at, updated_at, total_duration_ms
  )
  SELECT r.project_id, r.operation_id, r.branch_id, r.endpoint_id, r.action, r.status,
         r.failures_count, r.error, to_timestamp(r.created_at_ms / 1000.0),
         to_timestamp(r.updated_at_ms / 1000.0), r.total_duration_ms
  FROM jsonb_to_recordset($1::jsonb) AS r(
    project_id text, operation_id text, branch_id text, endpoint_id text, action text,
    status text, failures_count integer, error text, created_at_ms double precision,
    updated_at_ms double precision, total_duration_ms bigint
  )
  ON CONFLICT (project_id, operation_id) DO UPDATE SET
    branch_id = excluded.branch_id,
    endpoint_id = excluded.endpoint_id,
    action = excluded.action,
    status = excluded.status,
    failures_count = excluded.failures_count,
    error = excluded.error,
    created_at = excluded.created_at,
    updated_at = excluded.updated_at,
    total_duration_ms = excluded.total_duration_ms,
    archived_at = now()
  WHERE (o.updated_at, o.failures_count) <= (excluded.updated_at, excluded.failures_count)
    AND (o.status, o.failures_count, o.updated_at, o.error, o.total_duration_ms,
         o.branch_id, o.endpoint_id, o.action)
        IS DISTINCT FROM
        (excluded.status, excluded.failures_count, excluded.updated_at, excluded.error,
         excluded.total_duration_ms, excluded.branch_id, excluded.endpoint_id, excluded.action)`;

/**
 * Upserts the rows on `client`, inside the caller's transaction. Resolves with the number of
 * rows inserted or changed (a repeated write of the same records changes none).
 */
export async function upsertOperations(
  client: ClientBase,
  rows: readonly ArchiveRow[],
): Promise<number> {
  if (rows.length === 0) return 0;
  const result = await client.query(UPSERT, [JSON.stringify(rows)]);
  return result.rowCount ?? 0;
}
