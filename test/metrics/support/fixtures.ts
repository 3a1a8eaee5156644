/**
 * Hand-built inputs for the metrics module: project states and endpoints that satisfy the real
 * schemas (each builder parses what it returns). `rendering.ts` makes the metrics they are
 * given to and reads what those render.
 */
import type { Alert } from "../../../src/store/index.js";
import { endpointSchema, type Endpoint } from "../../../src/contract/index.js";
import {
  STATE_FORMAT,
  STATE_VERSION,
  projectStateSchema,
  type ProjectState,
} from "../../../src/store/index.js";
import { DURATION_BUCKETS_SECONDS, bucketIndex } from "../../../src/sync/totals.js";
import type { PollResult } from "../../../src/sync/poll-types.js";

export const T0_MS = Date.UTC(2026, 0, 1, 12, 0, 0);
export const T0_S = T0_MS / 1000;

type Arrival = ProjectState["totals"]["arrivals"][number];
type Tracked = ProjectState["tracked"][number];

/** The totals entry of operations of one action that ended with `status` after `durations`. */
export function arrival(action: string, status: string, durations: readonly number[]): Arrival {
  const buckets = new Array<number>(DURATION_BUCKETS_SECONDS.length + 1).fill(0);
  for (const d of durations) buckets[bucketIndex(d)]! += 1;
  const durationSum = durations.reduce((a, b) => a + b, 0);
  return { action, status, count: durations.length, durationSum, buckets };
}

let nextOperation = 0;

export function trackedOperation(
  projectId: string,
  fields: Pick<Tracked, "action" | "status"> & Partial<Tracked>,
): Tracked {
  nextOperation += 1;
  return {
    id: `00000000-0000-4000-8000-${String(nextOperation).padStart(12, "0")}`,
    projectId,
    failuresCount: 0,
    createdAtMs: T0_MS - 60_000,
    updatedAtMs: T0_MS,
    durationMs: 60_000,
    stuck: false,
    failed: false,
    ...fields,
  };
}

export function projectState(
  projectId: string,
  parts: {
    arrivals?: Arrival[];
    retries?: Record<string, number>;
    endpointStarts?: Record<string, number>;
    endpointSuspends?: Record<string, number>;
    tracked?: Tracked[];
    watermarkSecond?: number;
    catchingUp?: boolean;
    committedAtMs?: number;
    outbox?: ProjectState["outbox"];
    deadLetters?: ProjectState["deadLetters"];
    firing?: ProjectState["firing"];
    incidents?: ProjectState["incidents"];
  } = {},
): ProjectState {
  const watermark = { second: parts.watermarkSecond ?? T0_S - 30, ids: [] };
  return projectStateSchema.parse({
    format: STATE_FORMAT,
    version: STATE_VERSION,
    projectId,
    sequence: 1,
    committedAtMs: parts.committedAtMs ?? T0_MS,
    watermark,
    segment:
      parts.catchingUp === true ? { top: { second: T0_S, ids: [] }, resumeCursor: "c-1" } : null,
    tracked: parts.tracked ?? [],
    totals: {
      durationBuckets: [...DURATION_BUCKETS_SECONDS],
      arrivals: parts.arrivals ?? [],
      retries: parts.retries ?? {},
      endpointStarts: parts.endpointStarts ?? {},
      endpointSuspends: parts.endpointSuspends ?? {},
    },
    outbox: parts.outbox ?? [],
    deadLetters: parts.deadLetters ?? [],
    ...(parts.firing === undefined ? {} : { firing: parts.firing }),
    ...(parts.incidents === undefined ? {} : { incidents: parts.incidents }),
  });
}

/** An alert as the outbox holds it. */
export function alert(projectId: string, id: string, fields: Partial<Alert> = {}): Alert {
  return {
    id,
    kind: "operation_failed",
    projectId,
    operationId: `op-${id}`,
    action: "apply_config",
    status: "failed",
    failuresCount: 1,
    error: "config did not apply",
    createdAt: "2026-01-01T11:00:00.000Z",
    updatedAt: "2026-01-01T11:00:05.000Z",
    durationSeconds: 5,
    detectedAt: "2026-01-01T11:00:06.000Z",
    ...fields,
  };
}

export function endpoint(projectId: string, id: string, fields: Partial<Endpoint> = {}): Endpoint {
  return endpointSchema.parse({
    id,
    host: `${id}.eu-central-1.example.net`,
    proxy_host: "eu-central-1.example.net",
    project_id: projectId,
    branch_id: "br-main",
    region_id: "aws-eu-central-1",
    type: "read_write",
    autoscaling_limit_min_cu: 0.25,
    autoscaling_limit_max_cu: 1,
    current_state: "idle",
    settings: {},
    pooler_enabled: false,
    pooler_mode: "transaction",
    disabled: false,
    passwordless_access: true,
    created_at: "2025-12-01T00:00:00Z",
    updated_at: "2026-01-01T11:00:00Z",
    ...fields,
  });
}

/** A committed poll's result, as the daemon reports it. */
export function pollResult(state: ProjectState): PollResult {
  return {
    state,
    serverNowMs: state.committedAtMs,
    activityMs: [],
    spans: [],
    alerts: [],
    silenced: [],
    anomalies: [],
    transitions: [],
    requests: 1,
    catchingUp: state.segment !== null,
    caughtUp: state.segment === null,
    firstStart: false,
  };
}
