/**
 * The `compute_advice` alert: a larger compute is advised for an endpoint, as the compute
 * probe found (`src/computes/advice.ts`). Low severity, and a sink takes it only when one of its
 * `match` rules names the kind (`routes`). One alert per endpoint, reason and compute start:
 * its id is stable, so that raising it again after a restart does not make a second one.
 */
import { createHash } from "node:crypto";
import type { AdviceDetails, Alert } from "../../store/index.js";

export interface AdviceInput {
  readonly projectId: string;
  readonly branchId: string;
  readonly endpointId: string;
  /** `file_cache` or `connections`. */
  readonly reason: string;
  /** When the compute started (epoch ms). */
  readonly startedAtMs: number;
  /** When the advice was reached (epoch ms). */
  readonly detectedAtMs: number;
  readonly hitRatio: number | undefined;
  readonly connections: number;
  readonly maxConnections: number | undefined;
  readonly minComputeUnits: number;
  readonly maxComputeUnits: number;
  /** The threshold the reason is about: a ratio (percent) or a share of max_connections. */
  readonly threshold: number;
  readonly windowSeconds: number;
}

export function adviceAlert(input: AdviceInput): Alert {
  const startedAt = new Date(input.startedAtMs).toISOString();
  const id = createHash("sha256")
    .update(
      JSON.stringify([
        "compute_advice",
        input.projectId,
        input.endpointId,
        input.reason,
        startedAt,
      ]),
    )
    .digest("hex")
    .slice(0, 32);
  const advice: AdviceDetails = {
    reason: input.reason,
    hitRatio: input.hitRatio ?? null,
    connections: input.connections,
    maxConnections: input.maxConnections ?? null,
    minComputeUnits: input.minComputeUnits,
    maxComputeUnits: input.maxComputeUnits,
    windowSeconds: input.windowSeconds,
    summary: adviceSummary(input),
  };
  return {
    id,
    kind: "compute_advice",
    projectId: input.projectId,
    operationId: "",
    branchId: input.branchId,
    endpointId: input.endpointId,
    action: "",
    status: input.reason,
    failuresCount: 0,
    createdAt: startedAt,
    updatedAt: new Date(input.detectedAtMs).toISOString(),
    durationSeconds: Math.max(0, (input.detectedAtMs - input.startedAtMs) / 1000),
    detectedAt: new Date(input.detectedAtMs).toISOString(),
    advice,
  };
}

/** One sentence: what was seen, for how long, and what to change. */
export function adviceSummary(input: AdviceInput): string {
  const size =
    input.minComputeUnits === input.maxComputeUnits
      ? `${input.minComputeUnits} CU`
      : `${input.minComputeUnits}-${input.maxComputeUnits} CU`;
  const during = minutes(input.windowSeconds);
  if (input.reason === "file_cache") {
    const ratio = input.hitRatio === undefined ? "unknown" : `${input.hitRatio.toFixed(2)}%`;
    return `The file cache hit ratio of endpoint ${input.endpointId} (${size}) stayed below ${input.threshold}% for ${during} (now ${ratio}): its working set is not cached; a larger minimum size has a larger file cache.`;
  }
  const limit = input.maxConnections === undefined ? "" : ` of ${input.maxConnections}`;
  return `Endpoint ${input.endpointId} (${size}) stayed at or above ${Math.round(input.threshold * 100)}% of its max_connections for ${during} (now ${input.connections}${limit}): max_connections follows the minimum size and does not grow when the compute scales up; raise the minimum size, or use the pooled connection.`;
}

function minutes(seconds: number): string {
  if (seconds < 120) return `${Math.round(seconds)} s`;
  return `${Math.round(seconds / 60)} min`;
}
