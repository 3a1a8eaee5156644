/**
 * The poll's span hook: each attempt a poll saw end becomes a span record for the queue, with
 * the names known of its project, branch and endpoint and the project's region. Pure, but for
 * the name lookup.
 */
import { MAX_NAME_LENGTH, MAX_SPAN_ERROR_LENGTH, type OperationSpan } from "../store/index.js";
import { isFailure, type EndedAttempt, type NameLookup, type PollOptions } from "../sync/index.js";

/** The hook for the polls' options (`PollOptions.spansFor`). */
export function spanHook(names: NameLookup | undefined): NonNullable<PollOptions["spansFor"]> {
  return (attempts, { regionId }) => attempts.map((a) => operationSpanOf(a, regionId, names));
}

/** The span record of an attempt that ended. */
export function operationSpanOf(
  ended: EndedAttempt,
  regionId: string | undefined,
  names?: NameLookup,
): OperationSpan {
  const { op } = ended;
  const name = (value: string | undefined) =>
    value === undefined || value === "" ? undefined : value.slice(0, MAX_NAME_LENGTH);
  const optional: Partial<OperationSpan> = {
    branchId: op.branchId,
    endpointId: op.endpointId,
    projectName: name(names?.projectName(op.projectId)),
    branchName:
      op.branchId === undefined ? undefined : name(names?.branchName(op.projectId, op.branchId)),
    endpointName:
      op.endpointId === undefined
        ? undefined
        : name(names?.endpointName(op.projectId, op.endpointId)),
    regionId,
    // The error text is the failure's: a later attempt that finished does not carry it.
    error: isFailure(ended.status) ? op.error?.slice(0, MAX_SPAN_ERROR_LENGTH) : undefined,
  };
  return {
    kind: "operation",
    operationId: op.id,
    attempt: ended.attempt,
    projectId: op.projectId,
    action: op.action,
    status: ended.status,
    failuresCount: op.failuresCount,
    startMs: op.createdAtMs,
    endMs: ended.endMs,
    ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
  };
}
