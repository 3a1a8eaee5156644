/**
 * One run of the real daemon (`node dist/cli.js run --config FILE`) as a child process: its
 * JSON log lines (kept in part, counted in full), its `/metrics` address, its resident memory.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFile } from "node:fs/promises";

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

export interface DaemonRun {
  readonly n: number;
  readonly child: ChildProcess;
  /** Warnings, errors and a few notable lines (info lines are counted, not kept). */
  readonly notable: LogLine[];
  /** Lines per message text. */
  readonly messages: Map<string, number>;
  /** Output that is not a JSON log line (a crash's stack trace), kept for the report. */
  readonly other: string[];
  /** `http://127.0.0.1:<port>` once the daemon logged it. */
  metricsUrl: string | undefined;
  /** Resolves when it logged "exporter started". */
  readonly started: Promise<void>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly spawnedAtMs: number;
}

/** Messages kept whole even at level info. */
const NOTABLE_INFO = new Set([
  "exporter started",
  "projects discovered",
  "shutting down",
  "stopped",
]);

export function spawnDaemon(
  n: number,
  cli: string,
  configFile: string,
  env: Record<string, string>,
): DaemonRun {
  // Only the configuration and the given variables: a PGCP_* of the caller must not leak in.
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("PGCP_")),
  );
  const child = spawn(process.execPath, [cli, "run", "--config", configFile], {
    env: { ...inherited, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let markStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  const run: DaemonRun = {
    n,
    child,
    notable: [],
    messages: new Map(),
    other: [],
    metricsUrl: undefined,
    started,
    exited: new Promise((resolve) => {
      child.once("exit", (code, signal) => {
        resolve({ code, signal });
      });
    }),
    spawnedAtMs: Date.now(),
  };
  let partial = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const text of lines) {
      if (text.trim() === "") continue;
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        run.other.push(text);
        continue;
      }
      const msg = line.msg ?? "";
      run.messages.set(msg, (run.messages.get(msg) ?? 0) + 1);
      if (line.level !== "info" && line.level !== "debug") run.notable.push(line);
      else if (NOTABLE_INFO.has(msg)) run.notable.push(line);
      if (msg.startsWith("serving the status page") && typeof line.url === "string") {
        run.metricsUrl = line.url;
      }
      if (msg === "exporter started") markStarted();
    }
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    run.other.push(chunk);
  });
  return run;
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
