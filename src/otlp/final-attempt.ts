/**
 * An operation's final record as the span of its last attempt, for a reader that sees only the
 * record and not the polls before it (`wait`). The attempt is numbered as the exporter numbers
 * it (`sync/attempts.ts`), so the span has the same ids as the exporter's own span of that
 * attempt, and the same attributes but the names and region, which the record does not hold.
 */
import { isEndStatus, type Operation } from "../contract/index.js";
import { MAX_SPAN_ERROR_LENGTH, type OperationSpan } from "../store/index.js";
import { attemptOf } from "../sync/index.js";
import { operationSpanIds, type SpanIds } from "./ids.js";

/** The attempt `op`'s record is in, and that attempt's span ids in the operation's own trace. */
export function finalAttemptIds(op: Operation): SpanIds & { readonly attempt: number } {
  const attempt = attemptOf(op.status, op.failures_count);
  return { ...operationSpanIds(op.id, attempt), attempt };
}

/**
 * The span record of the attempt `op` ended in: from `created_at` to `updated_at`, its error
 * text cut to what a span keeps. Undefined while the operation is still open.
 */
export function finalAttemptSpan(op: Operation): OperationSpan | undefined {
  if (!isEndStatus(op.status)) return undefined;
  return {
    kind: "operation",
    operationId: op.id,
    attempt: attemptOf(op.status, op.failures_count),
    projectId: op.project_id,
    action: op.action,
    status: op.status,
    failuresCount: op.failures_count,
    startMs: Date.parse(op.created_at),
    endMs: Date.parse(op.updated_at),
    // What is not known stays absent: the span then carries no attribute for it.
    ...(op.branch_id == null ? {} : { branchId: op.branch_id }),
    ...(op.endpoint_id == null ? {} : { endpointId: op.endpoint_id }),
    ...(op.error == null ? {} : { error: op.error.slice(0, MAX_SPAN_ERROR_LENGTH) }),
  };
}
