/**
 * An operation snapshot (as the sync layer hands it to the alert rules) that has failed once,
 * after ten seconds, in a branch and on an endpoint. Tests of the alert rules and of their
 * routing spread it and change the fields they are about.
 */
import type { OperationSnapshot } from "../../../src/sync/transitions.js";

export const FAILED_OPERATION: OperationSnapshot = {
  id: "0b9e5d4c-1111-4222-8333-944455556666",
  projectId: "p-1",
  branchId: "br-1",
  endpointId: "ep-1",
  action: "start_compute",
  status: "failed",
  failuresCount: 1,
  createdAtMs: Date.parse("2026-01-01T00:00:00Z"),
  updatedAtMs: Date.parse("2026-01-01T00:00:10Z"),
  durationMs: 10_000,
  error: "compute did not start",
};
