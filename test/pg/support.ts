/**
 * Helpers of the Postgres tests: the suite's server (from the global setup), a fresh database
 * per test file, and small query helpers. What the database holds against the simulator's truth
 * is checked in `checks.ts` (shared with the replica soak). The daemon as a child process, waiting and seeded
 * choices are in `test/support/` (`daemon-process.ts`, `wait.ts`, `random.ts`).
 */
import pg from "pg";
import { describe, inject } from "vitest";
import type { Endpoint } from "../../src/contract/index.js";
import { PostgresStateStore } from "../../src/store/postgres-store.js";
import { createDatabase } from "../support/postgres-server.js";
import type { TestSimulator } from "../support/simulator.js";

export const PG_ADMIN_URL = inject("pgAdminUrl");
export const PG_SKIP_REASON = inject("pgSkipReason");

/** `describe`, skipped (with the global setup's reason) when there is no server. */
export const describePg: typeof describe =
  PG_ADMIN_URL === undefined ? (describe.skip as typeof describe) : describe;

const PG_BOUNCER_PORT = inject("pgBouncerPort");

/** How a test reaches the server: directly, or through PgBouncer in transaction mode. */
export type PgRoute = "direct" | "pgbouncer";

/** The routes the suite can take here (PgBouncer only when the global setup started one). */
export const PG_ROUTES: readonly PgRoute[] =
  PG_BOUNCER_PORT === undefined ? ["direct"] : ["direct", "pgbouncer"];

/** `url` (a database of the suite's server) by `route`: through PgBouncer, its port instead. */
export function routed(url: string, route: PgRoute): string {
  if (route === "direct") return url;
  if (PG_BOUNCER_PORT === undefined) {
    throw new Error(inject("pgBouncerSkipReason") ?? "no PgBouncer for the tests");
  }
  const through = new URL(url);
  through.port = String(PG_BOUNCER_PORT);
  return through.toString();
}

export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  readonly pool: pg.Pool;
  query<R extends pg.QueryResultRow = Record<string, unknown>>(
    sql: string,
    params?: unknown[],
  ): Promise<R[]>;
  drop(): Promise<void>;
}

/** A new, empty database on the suite's server. */
export async function createTestDatabase(prefix = "pgcp_test"): Promise<TestDatabase> {
  if (PG_ADMIN_URL === undefined) throw new Error(PG_SKIP_REASON ?? "no Postgres server");
  const db = await createDatabase(PG_ADMIN_URL, prefix);
  return {
    ...db,
    query: async <R extends pg.QueryResultRow>(sql: string, params?: unknown[]) =>
      (await db.pool.query<R>(sql, params)).rows,
  };
}

/** A new database with the store's schema: a store opened once (it migrates) and closed. */
export async function createMigratedDatabase(prefix: string): Promise<TestDatabase> {
  const db = await createTestDatabase(prefix);
  const store = new PostgresStateStore({ url: db.url });
  await store.open();
  await store.close();
  return db;
}

/** Drops a compute database and role a test made on the suite's server (each may be absent). */
export async function dropComputeDatabase(database: string, role: string): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
  } finally {
    await admin.end();
  }
}

/** The first endpoint of a project, as the simulator's API lists it now. */
export async function firstEndpoint(t: TestSimulator, projectId: string): Promise<Endpoint> {
  const listed = await t.api<{ endpoints: Endpoint[] }>("GET", `/projects/${projectId}/endpoints`);
  const endpoint = listed.body.endpoints[0];
  if (endpoint === undefined) throw new Error(`project ${projectId} has no endpoint`);
  return endpoint;
}
