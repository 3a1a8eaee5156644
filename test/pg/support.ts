/**
 * Helpers of the Postgres tests: the suite's server (from the global setup), a fresh database
 * per test file, and small query helpers. The daemon as a child process, waiting and seeded
 * choices are in `test/support/` (`daemon-process.ts`, `wait.ts`, `random.ts`).
 */
import pg from "pg";
import { describe, inject } from "vitest";
import { isEndStatus, type Endpoint } from "../../src/contract/index.js";
import type { ProjectState } from "../../src/store/index.js";
import { PostgresStateStore, parseStateRow } from "../../src/store/postgres-store.js";
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

// --- what the database holds, against the simulator's truth ---------------------------------

/** Every project's committed state, validated. */
export async function readStates(db: TestDatabase): Promise<Map<string, ProjectState>> {
  const rows = await db.query<{ project_id: string; text: string }>(
    "SELECT project_id, document::text AS text FROM pgcp_project_state",
  );
  return new Map(
    rows.map((r) => [r.project_id, parseStateRow(r.project_id, r.text, r.project_id)]),
  );
}

/**
 * The operations archive against the truth: every operation in an end status has exactly one
 * row, with its status, failures count and update time; an operation still open has a row only
 * with an end status it went through; no row names an unknown operation. Returns the problems
 * and the number of ended operations.
 */
export async function checkArchive(
  db: TestDatabase,
  sim: TestSimulator,
  projectIds: readonly string[],
): Promise<{ problems: string[]; ended: number }> {
  const rows = await db.query<{
    project_id: string;
    operation_id: string;
    status: string;
    failures_count: number;
    updated_at: Date;
  }>("SELECT project_id, operation_id, status, failures_count, updated_at FROM pgcp_operations");
  const archive = new Map(rows.map((r) => [`${r.project_id}/${r.operation_id}`, r]));
  const problems: string[] = [];
  if (archive.size !== rows.length) problems.push("an operation has several rows");
  let ended = 0;
  const known = new Set<string>();
  for (const project of projectIds) {
    for (const op of await sim.sim.truth(project)) {
      const key = `${project}/${op.id}`;
      known.add(key);
      const row = archive.get(key);
      if (isEndStatus(op.status)) {
        ended += 1;
        if (
          row?.status !== op.status ||
          row.failures_count !== op.failures_count ||
          row.updated_at.getTime() !== Date.parse(op.updated_at)
        ) {
          const archived =
            row === undefined
              ? "nothing"
              : `${row.status} (${row.failures_count}, ${row.updated_at.toISOString()})`;
          problems.push(
            `${key}: ${op.status} (${op.failures_count}, ${op.updated_at}) archived as ${archived}`,
          );
        }
      } else if (row !== undefined && !op.history.some((h) => h.status === row.status)) {
        problems.push(`${key}: open (${op.status}), archived as ${row.status}`);
      }
    }
  }
  for (const key of archive.keys()) {
    if (!known.has(key)) problems.push(`${key}: archived, but not in the truth`);
  }
  return { problems, ended };
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
