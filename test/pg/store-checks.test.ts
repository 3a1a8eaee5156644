/**
 * The Postgres store's problems, named where the cause is, by the built command against a real
 * server (directly and through a real PgBouncer) and the simulator:
 *
 * - `check-config --connect` checks the store without writing to it: it passes a usable one
 *   (empty, or migrated), and names refused credentials, a missing database, a role without
 *   the rights it needs, a schema from a newer build and an unreachable server, exiting 1 with
 *   one line, never showing the password.
 * - `run` refuses to start (exit 1, one line) when the store refuses its credentials at start,
 *   and starts, riding through it, when the server cannot be reached.
 */
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { SCHEMA_VERSION } from "../../src/store/migrations.js";
import { writeDaemonConfig } from "../support/daemon-config.js";
import { spawnDaemon } from "../support/daemon-process.js";
import { runCli, type CliRun } from "../support/run-cli.js";
import { simulatorWithProject } from "../support/simulator-suite.js";
import type { TestSimulator } from "../support/simulator.js";
import { removeDir, tempDir } from "../support/temp-dir.js";
import {
  createMigratedDatabase,
  createTestDatabase,
  describePg,
  PG_ADMIN_URL,
  PG_ROUTES,
  routed,
  type TestDatabase,
} from "./support.js";

/** `url` with another user and password. */
function as(url: string, user: string, password: string): string {
  const other = new URL(url);
  other.username = user;
  other.password = password;
  return other.toString();
}

/** `url` with another database. */
function onDatabase(url: string, database: string): string {
  const other = new URL(url);
  other.pathname = `/${database}`;
  return other.toString();
}

describePg("the state store's problems, named where the cause is", () => {
  let sim: TestSimulator;
  let projectId: string;
  simulatorWithProject((s) => ({ sim, projectId } = s), { plan: "free" });
  let empty: TestDatabase;
  let migrated: TestDatabase;
  let newer: TestDatabase;
  let dir: string;
  const role = `pgcp_reader_${String(process.pid)}`;
  const rolePassword = "reader-secret-5e1f";

  beforeAll(async () => {
    dir = await tempDir("pgcp-store-checks-");
    empty = await createTestDatabase("pgcp_check_empty");
    migrated = await createMigratedDatabase("pgcp_check_migrated");
    newer = await createTestDatabase("pgcp_check_newer");
    await newer.query(
      "CREATE TABLE pgcp_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    await newer.query("INSERT INTO pgcp_schema_migrations (version, name) VALUES (99, 'future')");
    // A role that may read the migrated store, and write none of it.
    await migrated.query(`CREATE ROLE ${role} LOGIN PASSWORD '${rolePassword}'`);
    await migrated.query(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`);
  });

  afterAll(async () => {
    await removeDir(dir);
    for (const db of [empty, newer]) await db.drop();
    await migrated.drop();
    const { default: pg } = await import("pg");
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    try {
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
    } finally {
      await admin.end();
    }
  });

  const checkConfig = async (stateUrl: string, env: Record<string, string> = {}) => {
    const run = await runCli(["check-config", "--projects", projectId, "--connect"], {
      PGCP_API_KEY: sim.apiKey,
      PGCP_API_URL: sim.apiUrl,
      PGCP_STATE_URL: stateUrl,
      ...env,
    });
    const secret = new URL(stateUrl).password;
    expect(run.stdout + run.stderr).not.toContain(secret);
    return run;
  };
  const storeLine = (run: CliRun) =>
    run.stdout.split("\n").find((l) => /^\s+(ok|FAILED)\s+state store/.test(l)) ?? "";

  it.each(PG_ROUTES)("passes a usable store, empty or migrated (%s)", async (route) => {
    const fresh = await checkConfig(routed(empty.url, route));
    expect(storeLine(fresh)).toMatch(
      /^ {2}ok {6}state store postgres:\/\/127\.0\.0\.1:\d+\/pgcp_check_empty_\w+: role postgres; schema public is empty: its tables will be created/,
    );
    expect(fresh.code).toBe(0);
    const ready = await checkConfig(routed(migrated.url, route));
    expect(storeLine(ready)).toContain(`schema public at version ${String(SCHEMA_VERSION)}`);
    expect(ready.code).toBe(0);
    const own = await checkConfig(routed(empty.url, route), { PGCP_STATE_SCHEMA: "pgcp_state" });
    expect(storeLine(own)).toContain("schema pgcp_state will be created");
    // Checked, not written: the empty database is still empty.
    expect(
      await empty.query("SELECT 1 FROM pg_namespace WHERE nspname = 'pgcp_state'"),
    ).toHaveLength(0);
    expect(await empty.query("SELECT to_regclass('pgcp_schema_migrations') AS t")).toEqual([
      { t: null },
    ]);
  });

  it.each(PG_ROUTES)("names refused credentials and a missing database (%s)", async (route) => {
    const wrong = await checkConfig(as(routed(empty.url, route), "postgres", "not-the-password"));
    expect(storeLine(wrong)).toMatch(
      /^ {2}FAILED {2}state store postgres:\/\/127\.0\.0\.1:\d+\/\w+: the server refuses the credentials/,
    );
    expect(wrong.code).toBe(1);
    const missing = await checkConfig(onDatabase(routed(empty.url, route), "pgcp_no_such_db"));
    expect(storeLine(missing)).toContain("the database does not exist");
    expect(missing.code).toBe(1);
  });

  it("names a role without rights, a newer build's schema and an unreachable server", async () => {
    const reader = await checkConfig(as(migrated.url, role, rolePassword));
    expect(storeLine(reader)).toContain(
      `role ${role} lacks INSERT on pgcp_project_state, UPDATE on pgcp_project_state`,
    );
    expect(reader.code).toBe(1);
    const creator = await checkConfig(as(empty.url, role, rolePassword));
    expect(storeLine(creator)).toContain(
      `role ${role} may not create the store's tables in schema public`,
    );
    const future = await checkConfig(newer.url);
    expect(storeLine(future)).toContain("version 99, newer than this build knows");
    expect(future.code).toBe(1);
    const closed = await checkConfig("postgres://pgcp:unused-pw@127.0.0.1:1/pgcp");
    expect(storeLine(closed)).toContain(
      "state store postgres://127.0.0.1:1/pgcp: the server cannot be reached",
    );
    expect(closed.code).toBe(1);
  });

  it("refuses to run with refused credentials or no rights, and rides through an unreachable server", async () => {
    const configFile = path.join(dir, "config.yaml");
    await writeDaemonConfig(configFile, {
      api: { url: sim.apiUrl },
      projects: [projectId],
      state: { dir: path.join(dir, "unused") },
      log: { level: "info" },
    });
    const runWith = async (stateUrl: string) => {
      const daemon = spawnDaemon(configFile, {
        env: { PGCP_API_KEY: sim.apiKey, PGCP_STATE_URL: stateUrl },
      });
      const started = await daemon.startedOrExit;
      return { daemon, started };
    };
    for (const [stateUrl, cause] of [
      [
        as(routed(migrated.url, PG_ROUTES.at(-1) ?? "direct"), "postgres", "wrong-pw-3c1d"),
        "the server refuses the credentials",
      ],
      [as(migrated.url, role, rolePassword), "the role lacks a right the store needs"],
    ] as const) {
      const { daemon, started } = await runWith(stateUrl);
      expect(started, daemon.tail()).toBeUndefined();
      expect((await daemon.exited).code).toBe(1);
      const fatal = daemon.logs.filter((l) => l.level === "fatal" || l.level === 60);
      expect(fatal, daemon.tail()).toHaveLength(1);
      expect(JSON.stringify(fatal[0])).toContain(cause);
      expect(daemon.text()).not.toContain(new URL(stateUrl).password);
    }
    const { daemon, started } = await runWith("postgres://pgcp:unused-pw@127.0.0.1:1/pgcp");
    try {
      expect(started, daemon.tail()).toBeDefined();
      await daemon.waitForLog("the store's error", (l) =>
        String(l.msg).startsWith("state store cannot be opened"),
      );
      // It serves, and says it is not ready.
      expect((await fetch(`${await daemon.url}/readyz`)).status).toBe(503);
    } finally {
      const exit = await daemon.stop();
      expect(exit, daemon.tail()).toEqual({ code: 0, signal: null });
    }
  });
});
