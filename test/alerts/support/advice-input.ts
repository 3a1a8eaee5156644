/**
 * What the compute probe found of one endpoint, as `adviceAlert` takes it: a file cache hit
 * ratio under the threshold for the window. Tests of the advice alert and of its routing use it.
 */
export const ADVICE_INPUT = {
  projectId: "p-1",
  branchId: "br-1",
  endpointId: "ep-1",
  reason: "file_cache",
  startedAtMs: Date.parse("2025-06-01T10:00:00Z"),
  detectedAtMs: Date.parse("2025-06-01T10:20:00Z"),
  hitRatio: 91.5,
  connections: 12,
  maxConnections: 112,
  minComputeUnits: 0.25,
  maxComputeUnits: 2,
  threshold: 99,
  windowSeconds: 600,
} as const;
