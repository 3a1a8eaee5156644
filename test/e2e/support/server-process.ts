/**
 * A real server from a system package (Prometheus, Alertmanager), run for a test: on a free
 * loopback port, until its readiness endpoint answers 200; a port taken meanwhile is tried
 * again. Stopping sends SIGTERM (SIGKILL after 10 s) and waits for the exit.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { waitFor } from "./exporter.js";

export interface ServerProcess {
  readonly url: string;
  readonly port: number;
  /** Everything the server wrote, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => {
    server.close(() => {
      resolve();
    });
  });
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/**
 * Starts `binary` with the arguments `args(port)` gives, and waits until `GET <readyPath>`
 * answers 200. `port` is a fresh free port, or the one given (a restart on the same address).
 */
export async function startServerProcess(options: {
  readonly name: string;
  readonly binary: string;
  readonly args: (port: number) => readonly string[];
  readonly readyPath: string;
  readonly port?: number;
}): Promise<ServerProcess> {
  let lastError: unknown;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = options.port ?? (await freePort());
    const chunks: string[] = [];
    const child = spawn(options.binary, [...options.args(port)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.setEncoding("utf8").on("data", (c: string) => chunks.push(c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => chunks.push(c));
    const exited = new Promise<number | null>((resolve) => {
      child.once("exit", (code) => {
        resolve(code);
      });
    });
    let dead = false;
    void exited.then(() => {
      dead = true;
    });
    const url = `http://127.0.0.1:${String(port)}`;
    try {
      await waitFor(
        `${options.name} to be ready`,
        async () => {
          if (dead) throw new Error(`${options.name} exited:\n${chunks.join("")}`);
          const response = await fetch(`${url}${options.readyPath}`).catch(() => undefined);
          return response?.status === 200 ? true : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 100 },
      );
    } catch (error) {
      lastError = error;
      await terminate(child, exited);
      if (options.port === undefined && chunks.join("").includes("address already in use")) {
        continue;
      }
      throw error;
    }
    return {
      url,
      port,
      output: () => chunks.join(""),
      stop: () => terminate(child, exited),
    };
  }
  throw lastError;
}

async function terminate(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}
