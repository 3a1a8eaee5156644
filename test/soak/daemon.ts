/**
 * One run of the real daemon (`node dist/cli.js run --config FILE`) as a child process
 * (`test/support/daemon-process.ts`), set up for a long soak: its JSON log lines kept in part
 * and counted in full, its output other than log lines, its `/metrics` address and its resident
 * memory; and the settings the soaks give the daemon and the simulator alike.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { spawnDaemon, type DaemonProcess } from "../support/daemon-process.js";
import { FUTURE_TOLERANCE_SECONDS } from "./faults.js";

/** The repository: the soaks' build is `node_modules/.cache/pgcp-bench/test/soak/`. */
export const REPOSITORY = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../../../..",
);
/** The daemon the soaks run, as deployed (`npm run build`). */
export const CLI = path.join(REPOSITORY, "dist/cli.js");

export interface LogLine {
  readonly level?: string;
  readonly msg?: string;
  readonly kind?: string;
  readonly status?: number;
  readonly code?: string;
  readonly route?: string;
  readonly reason?: string;
  readonly [key: string]: unknown;
}

/**
 * `logs` holds warnings, errors and a few notable lines (info lines are counted, not kept);
 * `output`, only what is not a log line (a crash's stack trace, a runtime warning).
 */
export interface DaemonRun extends DaemonProcess<LogLine> {
  readonly n: number;
  /** Lines per message text. */
  readonly messages: Map<string, number>;
  /** `http://127.0.0.1:<port>` once the daemon logged it. */
  metricsUrl: string | undefined;
  readonly spawnedAtMs: number;
}

/**
 * The soaks' polling: every project each second, endpoints every 3 s, small pages (10, then 25,
 * at most 3 per poll) so that a run that was down comes back to a catch-up in segments, and
 * dates up to a week ahead (the simulated clock runs far ahead of the daemon's).
 */
export const SOAK_POLL = {
  interval: 1,
  fastInterval: 1,
  endpointsInterval: 3,
  firstPageLimit: 10,
  pageLimit: 25,
  maxPagesPerPoll: 3,
  futureTolerance: FUTURE_TOLERANCE_SECONDS,
} as const;

/**
 * The simulator's traffic in the soaks (besides the number of projects): 90 activities per
 * simulated minute, 12% of operations failing (half of them retried), some slow or cancelled.
 */
export const SOAK_TRAFFIC = {
  operationsPerMinute: 90,
  failureShare: 0.12,
  retryShare: 0.5,
  slowShare: 0.03,
  cancellationShare: 0.03,
} as const;

/** The soaks' sinks send a message per half second of alerts, at most five alerts in it. */
export const SOAK_BATCHING = { groupWindow: 0.5, maxBatch: 5 } as const;

/** Messages kept whole even at level info. */
const NOTABLE_INFO = new Set([
  "exporter started",
  "projects discovered",
  "shutting down",
  "stopped",
]);

export function spawnRun(
  n: number,
  cli: string,
  configFile: string,
  env: Record<string, string>,
  /** Info lines to keep besides the notable ones. */
  keepAlso: (line: LogLine) => boolean = () => false,
): DaemonRun {
  const messages = new Map<string, number>();
  const daemon = spawnDaemon<LogLine>(configFile, {
    cli,
    env,
    output: "other",
    keepLog: (line) =>
      (line.level !== "info" && line.level !== "debug") ||
      NOTABLE_INFO.has(line.msg ?? "") ||
      keepAlso(line),
    onLog: (line) => {
      const msg = line.msg ?? "";
      messages.set(msg, (messages.get(msg) ?? 0) + 1);
    },
  });
  const run: DaemonRun = {
    ...daemon,
    n,
    messages,
    metricsUrl: undefined,
    spawnedAtMs: Date.now(),
  };
  void daemon.url.then((url) => {
    run.metricsUrl = url;
  });
  return run;
}

/** The run exists and its process has not exited. */
export function alive(run: DaemonRun | undefined): run is DaemonRun {
  return run !== undefined && run.child.exitCode === null && run.child.signalCode === null;
}

/**
 * What a run wrote that is not a log line (a crash, or a warning of the runtime such as the
 * MaxListenersExceededWarning the scheduler's shared abort signal once caused), as a problem.
 */
export function otherOutputProblems(run: DaemonRun): string[] {
  const rest = run
    .text()
    .split("\n")
    .filter((line) => line.trim() !== "")
    .join("\n");
  return rest === ""
    ? []
    : [`run ${run.n} wrote something other than log lines:\n${rest.slice(0, 1500)}`];
}

/** Resident memory of a process in bytes (Linux `/proc`), or undefined. */
export async function residentBytes(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match === null ? undefined : Number(match[1]) * 1024;
  } catch {
    return undefined;
  }
}

/** A few samples of the daemon's `/metrics`: heap and the retries by reason. */
export interface MetricsSample {
  readonly heapUsed: number | undefined;
  readonly retries: Record<string, number>;
}

export async function scrape(url: string): Promise<MetricsSample | undefined> {
  try {
    const response = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(2000) });
    const text = await response.text();
    const heap = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text);
    const retries: Record<string, number> = {};
    for (const m of text.matchAll(/^pgcp_api_retries_total\{([^}]*)\} (\S+)$/gm)) {
      const reason = /reason="([^"]*)"/.exec(m[1] ?? "")?.[1] ?? "?";
      retries[reason] = (retries[reason] ?? 0) + Number(m[2]);
    }
    return { heapUsed: heap === null ? undefined : Number(heap[1]), retries };
  } catch {
    return undefined;
  }
}
