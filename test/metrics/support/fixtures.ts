/**
 * Hand-built inputs for the metrics module: project states and endpoints that satisfy the real
 * schemas (each builder parses what it returns), and helpers that read one family out of a
 * rendering as sorted, whitespace-normalised lines.
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
import type { PollResult } from "../../../src/sync/poll.js";
import { ProjectViews, broadcast } from "../../../src/sync/index.js";
import {
  createExporterMetrics,
  type ExporterMetrics,
  type ExporterMetricsOptions,
} from "../../../src/metrics/index.js";

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

/**
 * Metrics with the given options, reading shared project views as the exporter's do; the
 * daemon's reports given to it reach the views first, then the metrics, as the exporter
 * subscribes them. `closeAll()` (after each test) stops their timers.
 */
export function metricsFor(options: Partial<ExporterMetricsOptions> = {}): ExporterMetrics {
  const projects = new ProjectViews();
  const metrics = createExporterMetrics({ version: "1.2.3", projects, ...options });
  opened.push(metrics);
  const reports = broadcast([projects, metrics], (error) => {
    throw error;
  });
  return { ...metrics, ...reports };
}

const opened: ExporterMetrics[] = [];

export function closeAll(): void {
  for (const m of opened.splice(0)) m.close();
}

/** The rendering as of now. */
export async function render(metrics: ExporterMetrics): Promise<string> {
  await metrics.refresh();
  return metrics.current().body.toString("utf8");
}

/**
 * The lines of one family (its HELP and TYPE lines and its samples, histogram suffixes
 * included), sorted, with runs of whitespace made single spaces.
 */
export function family(rendering: string, name: string): string[] {
  const samplePattern = new RegExp(`^${name}(_bucket|_sum|_count)?[{ ]`);
  return rendering
    .split("\n")
    .map((line) => line.trim().replace(/\s+/g, " "))
    .filter(
      (line) =>
        line.startsWith(`# HELP ${name} `) ||
        line.startsWith(`# TYPE ${name} `) ||
        samplePattern.test(line),
    )
    .sort();
}

/** Expected lines written as a block: trimmed, blank lines dropped, sorted. */
export function lines(block: string): string[] {
  return block
    .split("\n")
    .map((line) => line.trim().replace(/\s+/g, " "))
    .filter((line) => line !== "")
    .sort();
}

/** Only the sample lines of a family (no HELP and TYPE), for tests about values. */
export function samples(rendering: string, name: string): string[] {
  return family(rendering, name).filter((line) => !line.startsWith("#"));
}
