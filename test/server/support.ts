/**
 * Fixtures for the status page's tests: committed states, the project views and tracker the
 * view reads, fed the daemon's reports as the exporter feeds them, and the transitions a poll
 * reports.
 */
import type { Alert } from "../../src/store/index.js";
import { startServer, type RunningServer } from "../../src/server/index.js";
import {
  StatusTracker,
  statusView,
  type StatusPage,
  type StatusSource,
  type StatusView,
  type StatusViewOptions,
} from "../../src/status/index.js";
import {
  STATE_FORMAT,
  STATE_VERSION,
  StateFileError,
  type DeadLetter,
  type OutboxEntry,
  type ProjectState,
} from "../../src/store/index.js";
import {
  ProjectViews,
  broadcast,
  emptyTotals,
  type DaemonObserver,
  type PollResult,
  type ProjectInfo,
} from "../../src/sync/index.js";
import type { OperationSnapshot, Transition } from "../../src/sync/transitions.js";

/** 2025-01-01T00:00:00Z, the simulator's default start. */
export const T0 = Date.UTC(2025, 0, 1);

type Tracked = ProjectState["tracked"][number];

export function trackedOp(over: Partial<Tracked> & { id: string }): Tracked {
  return {
    projectId: "p-1",
    action: "start_compute",
    status: "running",
    failuresCount: 0,
    createdAtMs: T0,
    updatedAtMs: T0,
    durationMs: 0,
    stuck: false,
    failed: false,
    ...over,
  };
}

export function alert(over: Partial<Alert> & { id: string }): Alert {
  return {
    kind: "operation_failed",
    projectId: "p-1",
    operationId: `op-${over.id}`,
    action: "apply_config",
    status: "failed",
    failuresCount: 1,
    createdAt: new Date(T0).toISOString(),
    updatedAt: new Date(T0).toISOString(),
    durationSeconds: 1,
    detectedAt: new Date(T0).toISOString(),
    ...over,
  };
}

export function outboxEntry(id: string, pending: string[], createdAtMs = T0): OutboxEntry {
  return { alert: alert({ id }), createdAtMs, pending };
}

export function deadLetter(id: string, sink: string, reason: string, atMs: number): DeadLetter {
  return { alert: alert({ id }), sink, reason, atMs };
}

export function state(projectId: string, over: Partial<ProjectState> = {}): ProjectState {
  return {
    format: STATE_FORMAT,
    version: STATE_VERSION,
    projectId,
    sequence: 1,
    committedAtMs: T0,
    watermark: { second: T0 / 1000, ids: [] },
    segment: null,
    tracked: [],
    totals: emptyTotals(),
    outbox: [],
    deadLetters: [],
    ...over,
  };
}

/**
 * What the status page reads, fed as the daemon feeds it: the shared project views (projects
 * in the daemon's order, each loaded, blocked or new) and the page's own tracker. `reports`
 * reaches both, as the daemon's broadcast does. The watched list is reported once, before the
 * next report or read, however many projects were set.
 */
export class StatusFixture implements StatusSource {
  readonly projects: ProjectViews;
  readonly tracker: StatusTracker;
  readonly #reports: Required<DaemonObserver>;
  readonly #ids: string[] = [];
  #changed = false;

  constructor(options: { now?: () => number; failuresKept?: number } = {}) {
    this.projects = new ProjectViews(options.now === undefined ? {} : { now: options.now });
    this.tracker = new StatusTracker(options);
    this.#reports = broadcast([this.projects, this.tracker], (error) => {
      throw error;
    });
  }

  /** The daemon's reports, to the project views and the tracker alike. */
  get reports(): Required<DaemonObserver> {
    this.#flush();
    return this.#reports;
  }

  /** A watched project with this committed state (loaded at start), or none yet. */
  set(projectId: string, s: ProjectState | undefined): this {
    if (s !== undefined) this.#reports.stateLoaded(projectId, s);
    return this.#watch(projectId);
  }

  /** A watched project whose state file is not valid JSON. */
  block(projectId: string, file: string): this {
    const error = new StateFileError(file, "corrupt", "state file is not valid JSON");
    this.#reports.blocked(projectId, error);
    return this.#watch(projectId);
  }

  watched(): readonly string[] {
    this.#flush();
    return this.projects.watched();
  }

  get(projectId: string) {
    return this.projects.get(projectId);
  }

  #watch(projectId: string): this {
    this.#ids.push(projectId);
    this.#changed = true;
    return this;
  }

  #flush(): void {
    if (!this.#changed) return;
    this.#changed = false;
    this.#reports.projectsChanged(this.#ids);
  }
}

export function snapshot(over: Partial<OperationSnapshot> & { id: string }): OperationSnapshot {
  return {
    projectId: "p-1",
    branchId: undefined,
    endpointId: undefined,
    action: "apply_config",
    status: "failed",
    failuresCount: 1,
    createdAtMs: T0,
    updatedAtMs: T0 + 2000,
    durationMs: 2000,
    error: undefined,
    ...over,
  };
}

/** A failure as the tracker reports it: the operation ended in `failed` (or `error`). */
export function ended(op: OperationSnapshot): Transition {
  return {
    kind: "ended",
    op,
    status: op.status === "error" ? "error" : "failed",
    count: 1,
    durationSeconds: op.durationMs / 1000,
  };
}

export function pollResult(s: ProjectState, transitions: Transition[] = []): PollResult {
  return {
    state: s,
    serverNowMs: s.committedAtMs,
    activityMs: [],
    spans: [],
    alerts: [],
    silenced: [],
    anomalies: [],
    transitions,
    requests: 1,
    catchingUp: s.segment !== null,
    caughtUp: s.segment === null,
    firstStart: false,
  };
}

/** The time the status pages are rendered at: an hour after `T0`. */
export const NOW = T0 + 3_600_000;

/** The status page's view of `status` at `NOW`, with one webhook sink. */
export function viewOf(status: StatusFixture, over: Partial<StatusViewOptions> = {}): StatusView {
  return statusView({
    source: status,
    tracker: status.tracker,
    version: "9.9.9",
    apiUrl: "https://api.example.test/api/v2",
    sinks: [{ name: "webhook", kind: "webhook" }],
    notReadyReason: () => undefined,
    now: () => NOW,
    ...over,
  });
}

/** A server on loopback whose `/` is the status page `page` (and whose /metrics is empty). */
export function serveStatusPage(page: StatusPage): Promise<RunningServer> {
  const empty = { body: Buffer.from(""), gzip: Buffer.from(""), contentType: "text/plain" };
  return startServer({
    listen: "127.0.0.1:0",
    metrics: {
      current: () => empty,
      lend: () => ({ rendering: empty, release: () => undefined }),
    },
    notReadyReason: () => undefined,
    routes: { "/": page.handler },
  });
}

/** What the daemon reads of a project beside its id (`projectDescribed`). */
export function projectInfo(over: Partial<ProjectInfo> & { name: string }): ProjectInfo {
  return {
    account: "default",
    orgId: undefined,
    orgName: undefined,
    regionId: "aws-us-east-2",
    pgVersion: 17,
    ...over,
  };
}
