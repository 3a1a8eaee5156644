/**
 * Global setup of `npm run test:pg`: a Postgres server for the suite.
 *
 * - `PGCP_TEST_POSTGRES_URL` set: that server (CI starts one with `.ci/postgres`).
 * - Otherwise a throwaway cluster: `initdb` into a temporary directory, started with `pg_ctl`
 *   on a random loopback port (its socket in that directory, fsync off), stopped and removed
 *   at the end. Run as root, the server runs as the `postgres` user (it refuses root). TCP
 *   connections authenticate with scram-sha-256 (the superuser's password, random per run,
 *   is in the URL), so that a wrong password is refused as by a real server; the socket
 *   trusts.
 * - Neither possible: the suite fails under `CI=true`, and is skipped elsewhere with a message
 *   naming the Debian package (`postgresql`).
 *
 * - A real PgBouncer in transaction pooling mode in front of that server (`pgbouncer.ts`), for
 *   the tests that run the store through a pooler. Without Debian's `pgbouncer` package those
 *   tests fail under `CI=true`, and are skipped elsewhere with a message naming it.
 *
 * Each test file makes its own database on the server (`createTestDatabase`).
 */
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { freePort } from "../e2e/support/server-process.js";
import { ownForServer, runAsServer } from "./as-postgres.js";
import { PGBOUNCER_HINT, startPgBouncer, type PgBouncer } from "./pgbouncer.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** A superuser URL of the suite's server; undefined when the suite is skipped. */
    pgAdminUrl: string | undefined;
    /** Why the suite is skipped. */
    pgSkipReason: string | undefined;
    /** The port of a PgBouncer (transaction pooling) in front of the server. */
    pgBouncerPort: number | undefined;
    /** Why the tests through PgBouncer are skipped. */
    pgBouncerSkipReason: string | undefined;
  }
}

const INSTALL_HINT =
  "install the Debian package postgresql (apt-get install postgresql), or set PGCP_TEST_POSTGRES_URL";

let stopCluster: (() => Promise<void>) | undefined;
let bouncer: PgBouncer | undefined;

export async function setup(project: TestProject): Promise<void> {
  const ci = process.env.CI === "true";
  let url = process.env.PGCP_TEST_POSTGRES_URL;
  let reason: string | undefined;
  if (url === undefined || url === "") {
    try {
      const started = await startThrowawayCluster();
      url = started.url;
      stopCluster = started.stop;
    } catch (error) {
      url = undefined;
      reason = `no Postgres server for the tests: ${error instanceof Error ? error.message : String(error)}; ${INSTALL_HINT}`;
    }
  }
  if (url !== undefined) {
    try {
      await ping(url);
    } catch (error) {
      reason = `cannot reach the Postgres server of the tests: ${error instanceof Error ? error.message : String(error)}; ${INSTALL_HINT}`;
      url = undefined;
    }
  }
  if (reason !== undefined) {
    if (ci) throw new Error(reason);
    console.warn(`\n[test:pg] SKIPPED: ${reason}\n`);
  }
  project.provide("pgAdminUrl", url);
  project.provide("pgSkipReason", reason);
  let bouncerReason = reason;
  if (url !== undefined) {
    try {
      bouncer = await startPgBouncer({ serverUrl: url });
      await ping(bouncer.url);
    } catch (error) {
      await bouncer?.stop();
      bouncer = undefined;
      bouncerReason = `no PgBouncer for the tests: ${error instanceof Error ? error.message : String(error)}; ${PGBOUNCER_HINT}`;
      if (ci) throw new Error(bouncerReason);
      console.warn(`\n[test:pg] tests through PgBouncer SKIPPED: ${bouncerReason}\n`);
    }
  }
  project.provide("pgBouncerPort", bouncer?.port);
  project.provide("pgBouncerSkipReason", bouncerReason);
}

export async function teardown(): Promise<void> {
  await bouncer?.stop();
  await stopCluster?.();
}

async function ping(url: string): Promise<void> {
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

async function startThrowawayCluster(): Promise<{ url: string; stop: () => Promise<void> }> {
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
