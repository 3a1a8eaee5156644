/**
 * A real PgBouncer (Debian's `pgbouncer` package) in front of the tests' PostgreSQL server, in
 * transaction pooling mode: the way managed Postgres hands out pooled connections. Every
 * database of the server is reachable through it under its own name (a wildcard entry), with the
 * server's own user and password (SCRAM, checked by PgBouncer from its auth file).
 *
 * Pools are kept small so that the clients of several replicas really share server
 * connections: any session state one transaction left behind would leak into another client's.
 * `clientIdleTimeoutS` makes PgBouncer close client connections left idle that long, as managed
 * poolers do.
 *
 * Run as root, PgBouncer runs as the `postgres` user (it refuses root).
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "../e2e/support/server-process.js";
import { ownForServer, runAsServer } from "./as-postgres.js";

export const PGBOUNCER_HINT = "install the Debian package pgbouncer (apt-get install pgbouncer)";

export interface PgBouncerOptions {
  /** A URL of the server PgBouncer forwards to, with its user and password. */
  readonly serverUrl: string;
  /** Closes client connections idle this long (0: never, the default). */
  readonly clientIdleTimeoutS?: number;
  /** Server connections per database and user (default 5). */
  readonly poolSize?: number;
}

export interface PgBouncer {
  /** `serverUrl` with its host and port replaced by PgBouncer's (any database name works). */
  readonly url: string;
  readonly port: number;
  /** `url` for another database of the server, with the same user and password. */
  urlOf(serverUrl: string): string;
  stop(): Promise<void>;
}

/** The `pgbouncer` binary, or undefined when the package is not installed. */
export function pgBouncerBinary(): string | undefined {
  for (const dir of ["/usr/sbin", "/usr/bin", ...(process.env.PATH ?? "").split(":")]) {
    if (dir !== "" && existsSync(path.join(dir, "pgbouncer"))) return path.join(dir, "pgbouncer");
  }
  return undefined;
}

export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const binary = pgBouncerBinary();
  if (binary === undefined) throw new Error(`pgbouncer was not found; ${PGBOUNCER_HINT}`);
  const server = new URL(options.serverUrl);
  const user = decodeURIComponent(server.username);
  const password = decodeURIComponent(server.password);
  const dir = await mkdtemp(path.join(tmpdir(), "pgcp-pgbouncer-"));
  const pidFile = path.join(dir, "pgbouncer.pid");
  const logFile = path.join(dir, "pgbouncer.log");
  const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;
  await writeFile(path.join(dir, "userlist.txt"), `${quote(user)} ${quote(password)}\n`, {
    mode: 0o600,
  });
  await ownForServer(dir, path.join(dir, "userlist.txt"));
  let port = 0;
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    const ini = [
      "[databases]",
      `* = host=${server.hostname} port=${server.port || "5432"}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${String(port)}`,
      "unix_socket_dir =",
      "auth_type = scram-sha-256",
      `auth_file = ${path.join(dir, "userlist.txt")}`,
      "pool_mode = transaction",
      "max_client_conn = 1000",
      `default_pool_size = ${String(options.poolSize ?? 5)}`,
      `client_idle_timeout = ${String(options.clientIdleTimeoutS ?? 0)}`,
      `logfile = ${logFile}`,
      `pidfile = ${pidFile}`,
      "",
    ].join("\n");
    const iniFile = path.join(dir, "pgbouncer.ini");
    await writeFile(iniFile, ini, { mode: 0o600 });
    await ownForServer(iniFile);
    try {
      await runAsServer(binary, ["-d", "-q", iniFile]);
      // The daemon forks before it listens.
      await listening(port, 10_000);
      break;
    } catch (error) {
      if (attempt >= 2) {
        const log = await readFile(logFile, "utf8").catch(() => "");
        await rm(dir, { recursive: true, force: true });
        throw new Error(`pgbouncer did not start: ${String(error)}\n${log.slice(-2000)}`);
      }
    }
  }
  const urlOf = (serverUrl: string) => {
    const url = new URL(serverUrl);
    url.hostname = "127.0.0.1";
    url.port = String(port);
    return url.toString();
  };
  return {
    url: urlOf(options.serverUrl),
    port,
    urlOf,
    async stop() {
      const pid = Number((await readFile(pidFile, "utf8").catch(() => "")).trim());
      if (Number.isInteger(pid) && pid > 0) {
        try {
          process.kill(pid, "SIGINT");
        } catch {
          // Already gone.
        }
        for (let i = 0; i < 100 && alive(pid); i++) await sleep(50);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function listening(port: number, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ port, host: "127.0.0.1" });
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => {
        resolve(false);
      });
    });
    if (open) return;
    if (performance.now() > deadline) throw new Error(`nothing listens on port ${String(port)}`);
    await sleep(20);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
