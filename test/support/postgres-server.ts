/**
 * A PostgreSQL server as the tests, benchmarks and soaks use one (a throwaway one is started by
 * `postgres-cluster.ts`): a fresh database on it, for one test file or one benchmark, and a
 * check that it answers.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";

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
