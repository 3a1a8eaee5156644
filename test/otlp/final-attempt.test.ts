/**
 * The span record `wait` makes of an operation's final record: its attempt numbered as the
 * exporter numbers it (`sync/attempts.ts`), so that both give the same span the same ids; its
 * times and error text as a span keeps them; none while the operation is open.
 */
import { describe, expect, it } from "vitest";
import type { Operation } from "../../src/contract/index.js";
import { finalAttemptIds, finalAttemptSpan } from "../../src/otlp/final-attempt.js";
import { operationSpanIds } from "../../src/otlp/ids.js";
import { MAX_SPAN_ERROR_LENGTH } from "../../src/store/index.js";

const base: Operation = {
  id: "0c6e0d4e-6d7e-4b1f-9b53-2f0f3b7f6a01",
  project_id: "bold-river-123456",
  branch_id: "br-main-1",
  endpoint_id: null,
  action: "start_compute",
  status: "finished",
  failures_count: 0,
  created_at: "2026-11-29T09:00:00.250Z",
  updated_at: "2026-11-29T09:00:07Z",
};

describe("the attempt of a final record", () => {
  it.each([
    ["finished", 0, 1],
    ["finished", 2, 3],
    ["skipped", 0, 1],
    ["failed", 0, 1],
    ["failed", 2, 2],
    ["error", 1, 1],
  ])("%s with failures_count %i is attempt %i", (status, failures, attempt) => {
    const op = { ...base, status, failures_count: failures };
    expect(finalAttemptSpan(op)?.attempt).toBe(attempt);
    expect(finalAttemptIds(op)).toEqual({ ...operationSpanIds(op.id, attempt), attempt });
  });
});

it("runs from created_at to updated_at, with what the record knows and nothing it does not", () => {
  expect(finalAttemptSpan(base)).toEqual({
    kind: "operation",
    operationId: base.id,
    attempt: 1,
    projectId: "bold-river-123456",
    branchId: "br-main-1",
    action: "start_compute",
    status: "finished",
    failuresCount: 0,
    startMs: Date.UTC(2026, 10, 29, 9, 0, 0, 250),
    endMs: Date.UTC(2026, 10, 29, 9, 0, 7),
  });
});

it("keeps at most the error text a span keeps", () => {
  const op = { ...base, status: "failed", failures_count: 1, error: "x".repeat(5000) };
  expect(finalAttemptSpan(op)?.error).toHaveLength(MAX_SPAN_ERROR_LENGTH);
});

it("has no span while the operation is open", () => {
  expect(finalAttemptSpan({ ...base, status: "running" })).toBeUndefined();
});
