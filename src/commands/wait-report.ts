/**
 * What `pgcp-exporter wait` prints and the status it exits with: a line per status change, the
 * summary, the JSON document (with each ended operation's span ids), `--print-trace-ids`'s
 * line, and what a failure to read the API means. Pure: text in, text out.
 */
import {
  ApiError,
  wrongBaseUrl,
  type StatusChange,
  type WaitResult,
  type WaitVerdict,
} from "../api/index.js";
import { isEndStatus, type Operation } from "../contract/index.js";
import { finalAttemptIds, operationSpanIds, type TraceParent } from "../otlp/index.js";

export const EXIT = {
  succeeded: 0,
  failed: 1,
  usage: 2,
  timed_out: 3,
  unreachable: 4,
  /** Stopped by SIGINT or SIGTERM with operations still open (128 + SIGINT, as shells do). */
  interrupted: 130,
} as const;

/** The exit status of a wait that ran to its end. */
export function exitCodeOf(verdict: WaitVerdict): number {
  return EXIT[verdict];
}

/** `a3f…  start_compute on br-x/ep-y: running -> failed (failures 1: disk full)` */
export function statusLine(change: StatusChange, atMs: number): string {
  const op = change.operation;
  const status = change.from === undefined ? op.status : `${change.from} -> ${op.status}`;
  return `${new Date(atMs).toISOString()}  ${describe(op)}: ${status}${failure(op)}`;
}

/** The last lines of a text output: one per operation, then what it comes to. */
export function summaryLines(
  result: WaitResult,
  verdict: WaitVerdict,
  timeoutMs: number,
): string[] {
  const all = [...result.succeeded, ...result.failed, ...result.pending];
  const counts = new Map<string, number>();
  for (const op of all) counts.set(op.status, (counts.get(op.status) ?? 0) + 1);
  const tally = [...counts].map(([status, n]) => `${n} ${status}`).join(", ");
  const headline =
    verdict === "succeeded"
      ? "every operation finished or was skipped"
      : verdict === "failed"
        ? `${result.failed.length} operation${result.failed.length === 1 ? "" : "s"} did not succeed`
        : verdict === "interrupted"
          ? `stopped with ${result.pending.length} still open`
          : `timed out after ${timeoutMs / 1000} s with ${result.pending.length} still open`;
  return [
    `${all.length} operation${all.length === 1 ? "" : "s"}: ${tally === "" ? "none" : tally}`,
    ...all.map((op) => `  ${describe(op)}: ${op.status}${failure(op)}`),
    `${verdict}: ${headline} (exit ${exitCodeOf(verdict)})`,
  ];
}

/**
 * The one document `--output json` prints: the outcome and each operation's final record; an
 * operation that ended also has the ids of its last attempt's span (`trace_id` of the
 * operation's own trace, `span_id`, `attempt`), and `trace_parent` is the CI job's context the
 * spans were sent under, if any (the spans there have its trace id and the same span ids).
 */
export function jsonReport(
  projectId: string,
  result: WaitResult,
  verdict: WaitVerdict,
  parent?: TraceParent,
): string {
  const operations = [...result.succeeded, ...result.failed, ...result.pending].map(withSpanIds);
  return JSON.stringify(
    {
      project_id: projectId,
      result: verdict,
      exit_code: exitCodeOf(verdict),
      ...(parent === undefined
        ? {}
        : { trace_parent: { trace_id: parent.traceId, span_id: parent.spanId } }),
      operations,
    },
    null,
    2,
  );
}

/** `op` with the ids of its last attempt's span, when it has ended (an open one has none yet). */
function withSpanIds(op: Operation): Operation & Partial<SpanIdsJson> {
  if (!isEndStatus(op.status)) return op;
  const ids = finalAttemptIds(op);
  return { ...op, trace_id: ids.traceId, span_id: ids.spanId, attempt: ids.attempt };
}

interface SpanIdsJson {
  readonly trace_id: string;
  readonly span_id: string;
  readonly attempt: number;
}

/** What `--print-trace-ids` prints: one line of JSON. */
export function traceIdsReport(operationId: string, attempt: number): string {
  const ids = operationSpanIds(operationId, attempt);
  return JSON.stringify({
    operation_id: operationId,
    trace_id: ids.traceId,
    span_id: ids.spanId,
    attempt,
  } satisfies SpanIdsJson & { operation_id: string });
}

/**
 * A failure to read the API as an exit status and a reason: an operation or project the API
 * does not know is the caller's mistake (2), and so is a base URL that answers 404 even at the
 * API's root (`rootNotFound`: not the API, e.g. without `/api/v2`); anything else means the API
 * could not be read (4). An `ApiError` never holds the API key.
 */
export function apiFailure(
  error: unknown,
  apiUrl: string,
  rootNotFound = false,
): { code: number; reason: string } {
  if (!(error instanceof ApiError)) {
    return { code: EXIT.unreachable, reason: `the API could not be read: ${String(error)}` };
  }
  if (error.status === 404 && rootNotFound) {
    return { code: EXIT.usage, reason: wrongBaseUrl(apiUrl) };
  }
  if (error.status === 404) {
    return {
      code: EXIT.usage,
      reason: `not found (check --project and --operation): ${error.message}`,
    };
  }
  if (error.status === 401 || error.status === 403) {
    return {
      code: EXIT.unreachable,
      reason: `the API refused the key (check PGCP_API_KEY): ${error.message}`,
    };
  }
  if (error.kind === "network" || error.kind === "timeout") {
    return {
      code: EXIT.unreachable,
      reason: `cannot reach the API at ${apiUrl}: ${error.message}`,
    };
  }
  return { code: EXIT.unreachable, reason: `the API could not be read: ${error.message}` };
}

function describe(op: Operation): string {
  const where = [op.branch_id, op.endpoint_id].filter((id) => typeof id === "string").join("/");
  return `${op.id} ${op.action}${where === "" ? "" : ` on ${where}`}`;
}

function failure(op: Operation): string {
  if (op.failures_count === 0 && typeof op.error !== "string") return "";
  const parts = [`failures ${op.failures_count}`];
  if (typeof op.error === "string") parts.push(op.error);
  return ` (${parts.join(": ")})`;
}
