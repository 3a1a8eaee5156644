/**
 * A throwaway PostgreSQL server for the Postgres tests (`test/pg/global-setup.ts`) and the
 * handover benchmark: `initdb` into a temporary directory, started with `pg_ctl` on a random
 * loopback port (its socket in that directory, fsync off), stopped and removed by `stop`. Run
 * as root, the server runs as the `postgres` user (it refuses root). TCP connections
 * authenticate with scram-sha-256 (the superuser's password, random per server, is in the URL),
 * so that a wrong password is refused as by a real server; the socket trusts. Needs Debian's
 * `postgresql` package (its newest version's binaries), or `initdb` and `pg_ctl` on PATH. Also
 * a fresh database on a server, for one test file or one benchmark.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { chmod, chown, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";

const run = promisify(execFile);

/** A database made for a test or a benchmark, with a small pool on it. */
export interface ScratchDatabase {
  readonly url: string;
  readonly name: string;
  readonly pool: pg.Pool;
  /** Ends the pool and drops the database. */
  drop(): Promise<void>;
}

/** A new, empty database `<prefix>_<random>` on the server of the superuser URL `adminUrl`. */
export async function createDatabase(adminUrl: string, prefix: string): Promise<ScratchDatabase> {
  const name = `${prefix}_${randomBytes(4).toString("hex")}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
  pool.on("error", () => undefined);
  return {
    url: url.toString(),
    name,
    pool,
    drop: async () => {
      await pool.end();
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** Connects to `url` and runs `SELECT 1` (a server that does not answer throws). */
export async function pingPostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query("SELECT 1");
  } finally {
    await client.end();
  }
}

/** The newest PostgreSQL server's bin directory (Debian installs them side by side). */
function serverBinaries(): string {
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

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => {
        resolve(port);
      });
    });
  });
}

/** Starts the server; its superuser URL, and `stop`, which stops it and removes its files. */
export async function startThrowawayPostgres(): Promise<{
  url: string;
  stop: () => Promise<void>;
}> {
  const bin = serverBinaries();
  const dir = await mkdtemp(path.join(tmpdir(), "pgcp-pg-"));
  const data = path.join(dir, "data");
  const log = path.join(dir, "server.log");
  // The server refuses to run as root: run it as `postgres` (Debian's server user).
  const asRoot = process.getuid?.() === 0;
  const as = async (file: string, args: string[]) => {
    if (!asRoot) return run(file, args, { timeout: 60_000 });
    return run("runuser", ["-u", "postgres", "--", file, ...args], { timeout: 60_000 });
  };
  const password = randomBytes(12).toString("hex");
  const passwordFile = path.join(dir, "password");
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  if (asRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]).catch(() => {
      throw new Error("running as root, and there is no postgres user to run the server as");
    });
    const { stdout: group } = await run("id", ["-g", "postgres"]);
    const [uid, gid] = [Number(stdout.trim()), Number(group.trim())];
    await chown(dir, uid, gid);
    await chown(passwordFile, uid, gid);
    await chmod(dir, 0o700);
  }
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
        await as(path.join(bin, "pg_ctl"), [
          "-D",
          data,
          "-l",
          log,
          "-w",
          "-t",
          "30",
          "-o",
          `-p ${String(port)} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`,
          "start",
        ]);
        break;
      } catch (error) {
        if (attempt >= 2) {
          const text = await readFile(log, "utf8").catch(() => "");
          throw new Error(`pg_ctl start failed: ${String(error)}\n${text.slice(-2000)}`);
        }
      }
    }
    const stop = async () => {
      await as(path.join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"]).catch(
        () => undefined,
      );
      await rm(dir, { recursive: true, force: true });
    };
    return {
      url: `postgres://postgres:${password}@127.0.0.1:${String(port)}/postgres`,
      stop,
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
