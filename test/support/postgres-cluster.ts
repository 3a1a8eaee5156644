/**
 * A throwaway PostgreSQL server from Debian's `postgresql` package, for the Postgres tests
 * (`global-setup.ts`) and the replica soak (`test/soak/replicas.ts`): `initdb` into a temporary
 * directory, started with `pg_ctl` on a random loopback port (its socket in that directory,
 * fsync off), stopped and removed at the end. Run as root, the server runs as the `postgres`
 * user (it refuses root). TCP connections authenticate with scram-sha-256 (the superuser's
 * password, random per server, is in the URL), so that a wrong password is refused as by a
 * real server; the socket trusts.
 *
 * `crash` stops the server as a crash would (`pg_ctl -m immediate stop`: no checkpoint, every
 * connection cut) and `restart` starts it again on the same port and data directory, where it
 * recovers from its write-ahead log.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "../e2e/support/server-process.js";
import { ownForServer, runAsServer } from "./as-postgres.js";

export const POSTGRESQL_HINT = "install the Debian package postgresql (apt-get install postgresql)";

export interface ClusterOptions {
  /**
   * `synchronous_commit` on: a commit is written to the log before it is acknowledged, so that
   * it survives `crash`. Off by default (faster; a crash may lose the last commits).
   */
  readonly durableCommits?: boolean;
}

export interface ThrowawayCluster {
  /** The superuser's URL (with its password: never print it). */
  readonly url: string;
  readonly port: number;
  /** Stops the server at once, as a crash would (`pg_ctl -m immediate stop`). */
  readonly crash: () => Promise<void>;
  /** Starts the server again on the same port and data directory (after `crash`). */
  readonly restart: () => Promise<void>;
  /** Stops the server (immediately) and removes its directory. */
  readonly stop: () => Promise<void>;
}

/** The newest PostgreSQL server's bin directory (Debian installs them side by side). */
export function serverBinaries(): string {
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => /^\d+$/.test(v) && existsSync(path.join(root, v, "bin", "initdb")))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return path.join(root, versions[0], "bin");
  }
  for (const dir of (process.env.PATH ?? "").split(":")) {
    if (dir !== "" && existsSync(path.join(dir, "initdb")) && existsSync(path.join(dir, "pg_ctl")))
      return dir;
  }
  throw new Error("the PostgreSQL server binaries (initdb, pg_ctl) were not found");
}

export async function startThrowawayCluster(
  options: ClusterOptions = {},
): Promise<ThrowawayCluster> {
  const bin = serverBinaries();
  const dir = await mkdtemp(path.join(tmpdir(), "pgcp-pg-"));
  const data = path.join(dir, "data");
  const log = path.join(dir, "server.log");
  // The server refuses to run as root: run it as `postgres` (Debian's server user).
  const as = runAsServer;
  const password = randomBytes(12).toString("hex");
  const passwordFile = path.join(dir, "password");
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  await ownForServer(dir, passwordFile);
  await chmod(dir, 0o700);
  const synchronousCommit = options.durableCommits === true ? "on" : "off";
  const pgCtlStart = (port: number) =>
    as(path.join(bin, "pg_ctl"), [
      "-D",
      data,
      "-l",
      log,
      "-w",
      "-t",
      "30",
      "-o",
      `-p ${String(port)} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=${synchronousCommit} -c full_page_writes=off -c max_connections=200`,
      "start",
    ]);
  const startFailed = async (error: unknown) => {
    const text = await readFile(log, "utf8").catch(() => "");
    return new Error(`pg_ctl start failed: ${String(error)}\n${text.slice(-2000)}`);
  };
  const immediateStop = () =>
    as(path.join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"]);
  try {
    await as(path.join(bin, "initdb"), [
      "-D",
      data,
      "--auth-local=trust",
      "--auth-host=scram-sha-256",
      `--pwfile=${passwordFile}`,
      "-U",
      "postgres",
      "-E",
      "UTF8",
      "--no-sync",
    ]);
    await rm(passwordFile, { force: true });
    let port = 0;
    for (let attempt = 0; ; attempt++) {
      port = await freePort();
      try {
        await pgCtlStart(port);
        break;
      } catch (error) {
        if (attempt >= 2) throw await startFailed(error);
      }
    }
    return {
      url: `postgres://postgres:${password}@127.0.0.1:${String(port)}/postgres`,
      port,
      crash: async () => {
        await immediateStop();
      },
      restart: async () => {
        try {
          await pgCtlStart(port);
        } catch (error) {
          throw await startFailed(error);
        }
      },
      stop: async () => {
        await immediateStop().catch(() => undefined);
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await immediateStop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
