/**
 * What `pgcp-exporter wait` prints and the status it exits with: a line per status change, the
 * summary, the JSON document, and what a failure to read the API means. Pure: text in, text out.
 */
import {
  ApiError,
  wrongBaseUrl,
  type StatusChange,
  type WaitResult,
  type WaitVerdict,
} from "../api/index.js";
import type { Operation } from "../contract/index.js";

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

/** The one document `--output json` prints: the outcome and each operation's final record. */
export function jsonReport(projectId: string, result: WaitResult, verdict: WaitVerdict): string {
  const operations: Operation[] = [...result.succeeded, ...result.failed, ...result.pending];
  return JSON.stringify(
    {
      project_id: projectId,
      result: verdict,
      exit_code: exitCodeOf(verdict),
      operations,
    },
    null,
    2,
  );
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
