/**
 * A child process with a small request/response protocol over the IPC channel of
 * `child_process.fork`: the benchmark's driver starts the simulator, the exporter and the
 * baselines each in their own process (so that each has a core of its own and its own memory
 * figures), and asks them to do things by name.
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

interface Request {
  readonly id: number;
  readonly command: string;
  readonly args: unknown;
}

type Response =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly error: string };

/** A command handler of a worker: gets the (structured-cloned) arguments, returns a value. */
export type Handler = (args: never) => unknown;

type ArgOf<F> = F extends (args: infer A) => unknown ? A : never;
type ResultOf<F> = F extends (...args: never[]) => infer R ? Awaited<R> : never;

export interface Worker<H = Record<string, Handler>> {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Runs `command` in the worker and resolves with what it returned. */
  call<T>(command: string, args?: unknown): Promise<T>;
  /** `call`, typed by the worker's handlers (`Worker<SimHost>`). */
  run<K extends keyof H & string>(command: K, args?: ArgOf<H[K]>): Promise<ResultOf<H[K]>>;
  /** Lines the worker wrote to stderr (kept for failure messages). */
  readonly stderr: string[];
  /** Stops the worker (SIGTERM, then SIGKILL after a grace period) and waits for its exit. */
  close(): Promise<void>;
}

/** The compiled module next to this one's folder: `worker("workers/sim-host.js")`. */
export function workerPath(relative: string): string {
  return fileURLToPath(new URL(`../${relative}`, import.meta.url));
}

/**
 * Forks `file` and waits for it to say it is ready. `execArgv` are node flags (heap size,
 * `--expose-gc`); `args` are handed to the worker in `process.argv`.
 */
export async function startWorker<H = Record<string, Handler>>(
  file: string,
  options: {
    execArgv?: readonly string[];
    args?: readonly string[];
    /** Where the worker's standard output goes: ours (default) or /dev/null. */
    stdout?: "inherit" | "ignore";
    /** The worker's environment (default: ours). */
    env?: NodeJS.ProcessEnv;
  } = {},
): Promise<Worker<H>> {
  const child = fork(file, [...(options.args ?? [])], {
    execArgv: [...(options.execArgv ?? [])],
    stdio: ["ignore", options.stdout ?? "inherit", "pipe", "ipc"],
    serialization: "advanced",
    env: options.env ?? process.env,
  });
  const stderr: string[] = [];
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr.push(chunk);
    if (process.env.BENCH_VERBOSE === "1") process.stderr.write(chunk);
  });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  const exited = new Promise<void>((resolve) => {
    child.once("exit", (code, signal) => {
      for (const p of pending.values()) {
        p.reject(
          new Error(
            `worker ${file} exited (${String(code ?? signal)}):\n${stderr.join("").slice(-4000)}`,
          ),
        );
      }
      pending.clear();
      resolve();
    });
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.once("exit", () => {
      reject(new Error(`worker ${file} exited before it was ready:\n${stderr.join("")}`));
    });
    child.on("message", (message: Response | "ready") => {
      if (message === "ready") {
        resolve();
        return;
      }
      const p = pending.get(message.id);
      if (p === undefined) return;
      pending.delete(message.id);
      if (message.ok) p.resolve(message.value);
      else p.reject(new Error(`${file}: ${message.error}`));
    });
  });
  await ready;
  const call = <T>(command: string, args?: unknown): Promise<T> => {
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      const request: Request = { id, command, args };
      child.send(request);
    });
  };
  return {
    child,
    pid: child.pid ?? -1,
    stderr,
    call,
    run: (command, args) => call(command, args),
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** In the worker: answers the driver's requests with `handlers`, then says it is ready. */
export function serve(handlers: Readonly<Record<string, Handler>>): void {
  process.on("message", (message: Request) => {
    void (async () => {
      let response: Response;
      try {
        const handler = handlers[message.command];
        if (handler === undefined) throw new Error(`no such command: ${message.command}`);
        const value = await (handler as (args: unknown) => unknown)(message.args ?? {});
        response = { id: message.id, ok: true, value };
      } catch (error) {
        response = {
          id: message.id,
          ok: false,
          error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        };
      }
      process.send?.(response);
    })();
  });
  process.on("SIGTERM", () => {
    process.exit(0);
  });
  // The driver went away (it crashed, or was stopped): no worker outlives it.
  process.on("disconnect", () => {
    process.exit(0);
  });
  process.send?.("ready");
}
