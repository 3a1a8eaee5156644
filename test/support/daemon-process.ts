/**
 * The real daemon (`node dist/cli.js run --config FILE`) as a child process, for the tests
 * that kill it, restart it or run several: what it writes, its JSON log lines as they come, a
 * wait for one of them, a stop that waits for the exit, and a group that kills whatever is
 * still running when a test ends. It gets the caller's environment without any PGCP_* or OTEL_* variable
 * (those of the person running the tests must not leak in), plus the `env` given.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

/** `dist/cli.js` of this checkout (`npm run build`); a copy compiled elsewhere passes its own. */
export const CLI = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));

/** One JSON line the daemon wrote to its standard output. */
export type DaemonLogLine = Record<string, unknown>;

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface DaemonOptions<L extends DaemonLogLine = DaemonLogLine> {
  /** Variables added to the caller's environment (whose PGCP_* variables are left out). */
  readonly env?: Readonly<Record<string, string>>;
  /** The script to run (default: `CLI`). */
  readonly cli?: string;
  /** More arguments, after `run --config FILE`. */
  readonly args?: readonly string[];
  /**
   * Which log lines `logs` keeps (default: all). A long run keeps a few and counts the rest
   * with `onLog`.
   */
  readonly keepLog?: (line: L) => boolean;
  /** Called with every log line, kept or not, in order. */
  readonly onLog?: (line: L) => void;
  /**
   * What `output` keeps: everything written (`all`, the default), or only what is not a log
   * line (`other`: standard error, a crash's stack trace), for a long run.
   */
  readonly output?: "all" | "other";
}

export interface DaemonProcess<L extends DaemonLogLine = DaemonLogLine> {
  readonly child: ChildProcess;
  /** What it wrote, standard output and error interleaved as received (see `output`). */
  readonly output: string[];
  /** Its JSON log lines, parsed (those `keepLog` kept). */
  readonly logs: L[];
  /** Resolves with its "exporter started" line (never, if it dies first: race `exited`). */
  readonly started: Promise<L>;
  /** Resolves with its "exporter started" line, or with undefined if it exits first. */
  readonly startedOrExit: Promise<L | undefined>;
  /** Resolves with the address of its HTTP server, once it logged it. */
  readonly url: Promise<string>;
  readonly exited: Promise<Exit>;
  /** `output` as one string. */
  text(): string;
  /** The last `lines` lines of `output`, for a failure message. */
  tail(lines?: number): string;
  /**
   * The first log line `match` accepts: one already in `logs`, or the next one logged.
   * Rejects when the process ends without it, or after `timeoutMs` (a safety net).
   */
  waitForLog(what: string, match: (line: L) => boolean, timeoutMs?: number): Promise<L>;
  /**
   * Sends `signal`, and resolves with the exit once everything it wrote has been read (at once
   * if it has ended already).
   */
  stop(signal?: "SIGTERM" | "SIGINT" | "SIGKILL"): Promise<Exit>;
}

interface Waiter<L> {
  readonly what: string;
  readonly match: (line: L) => boolean;
  readonly resolve: (line: L) => void;
  readonly reject: (error: Error) => void;
}

/** `node CLI run --config configFile ...args`; see `DaemonOptions`. */
export function spawnDaemon<L extends DaemonLogLine = DaemonLogLine>(
  configFile: string,
  options: DaemonOptions<L> = {},
): DaemonProcess<L> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !name.startsWith("PGCP_") && !name.startsWith("OTEL_"),
    ),
  );
  const child = spawn(
    process.execPath,
    [options.cli ?? CLI, "run", "--config", configFile, ...(options.args ?? [])],
    { env: { ...inherited, ...options.env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  const keepAllOutput = (options.output ?? "all") === "all";
  const output: string[] = [];
  const logs: L[] = [];
  const text = () => output.join("");
  const tail = (lines = 40) => text().split("\n").slice(-lines).join("\n");

  let markStarted: (line: L) => void = () => undefined;
  const started = new Promise<L>((resolve) => {
    markStarted = resolve;
  });
  let markUrl: (url: string) => void = () => undefined;
  const url = new Promise<string>((resolve) => {
    markUrl = resolve;
  });
  const exited = new Promise<Exit>((resolve) => {
    child.once("exit", (code, signal) => {
      resolve({ code, signal });
    });
  });

  const waiters = new Set<Waiter<L>>();
  let closed = false;
  let markClosed: () => void = () => undefined;
  const allRead = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  const logged = (line: L) => {
    options.onLog?.(line);
    if (options.keepLog?.(line) ?? true) logs.push(line);
    if (line.msg === "exporter started") markStarted(line);
    // The line that says where the HTTP server listens (its wording may change).
    if (typeof line.url === "string" && String(line.msg).startsWith("serving")) markUrl(line.url);
    for (const waiter of waiters) {
      if (!waiter.match(line)) continue;
      waiters.delete(waiter);
      waiter.resolve(line);
    }
  };

  let partial = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    if (keepAllOutput) output.push(chunk);
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      if (line.trim() === "") continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        parsed = undefined;
      }
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
        logged(parsed as L);
      } else if (!keepAllOutput) {
        output.push(`${line}\n`);
      }
    }
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    output.push(chunk);
  });
  // After "close" (not "exit"), everything it wrote has been read: no line can come any more.
  child.once("close", () => {
    closed = true;
    markClosed();
    for (const waiter of waiters) {
      waiter.reject(new Error(`it ended before it logged ${waiter.what}:\n${tail()}`));
    }
    waiters.clear();
  });

  const waitForLog = (what: string, match: (line: L) => boolean, timeoutMs = 20_000) => {
    const seen = logs.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    if (closed) return Promise.reject(new Error(`it ended before it logged ${what}:\n${tail()}`));
    return new Promise<L>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}:\n${tail()}`));
      }, timeoutMs);
      const waiter: Waiter<L> = {
        what,
        match,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      waiters.add(waiter);
    });
  };

  return {
    child,
    output,
    logs,
    started,
    startedOrExit: Promise.race([started, exited.then(() => undefined)]),
    url,
    exited,
    text,
    tail,
    waitForLog,
    stop: async (signal = "SIGTERM") => {
      child.kill(signal);
      await allRead;
      return exited;
    },
  };
}

/**
 * Its log lines at level error or fatal, each as `<label>: <the line as JSON>`: what a test
 * that expects none shows when there are some.
 */
export function errorsLogged(daemon: DaemonProcess, label: string): string[] {
  return daemon.logs
    .filter((l) => l.level === "error" || l.level === "fatal")
    .map((l) => `${label}: ${JSON.stringify(l)}`);
}

/** The daemons a test spawned, so that its end can kill those still running. */
export class DaemonGroup {
  readonly #running = new Set<DaemonProcess>();

  spawn(configFile: string, options: DaemonOptions = {}): DaemonProcess {
    const daemon = spawnDaemon(configFile, options);
    this.#running.add(daemon);
    void daemon.exited.then(() => this.#running.delete(daemon));
    return daemon;
  }

  /**
   * SIGKILL to every one still running (SIGCONT first, for one stopped with SIGSTOP); resolves
   * when they have exited.
   */
  async killAll(): Promise<void> {
    const running = [...this.#running];
    for (const daemon of running) {
      daemon.child.kill("SIGCONT");
      daemon.child.kill("SIGKILL");
    }
    await Promise.all(running.map((d) => d.exited));
  }
}
