/**
 * The Postgres store's schema, as numbered migrations. `migrate` applies the ones a database
 * lacks, in order, in one transaction that holds an advisory lock, so that replicas starting
 * together neither race nor see a half-made schema. A database migrated by a newer build (a
 * version this build does not know) is refused rather than written to.
 *
 * Never edit a migration that has shipped: add the next one.
 */
import type { ClientBase } from "pg";
import { quoteIdentifier } from "./postgres-transaction.js";

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** Key of the advisory lock migrations hold (`pg_advisory_xact_lock(key1, key2)`). */
export const MIGRATION_LOCK: readonly [number, number] = [0x70676370, 1];

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "project state, leases and replicas",
    sql: `
      CREATE TABLE pgcp_project_state (
        project_id    text PRIMARY KEY,
        document      jsonb NOT NULL,
        sequence      bigint NOT NULL CHECK (sequence > 0),
        fencing_token bigint,
        committed_by  text,
        committed_at  timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE pgcp_leases (
        project_id    text PRIMARY KEY,
        holder        text,
        fencing_token bigint NOT NULL DEFAULT 0,
        expires_at    timestamptz NOT NULL DEFAULT '-infinity',
        acquired_at   timestamptz
      );
      CREATE INDEX pgcp_leases_holder ON pgcp_leases (holder);
      CREATE TABLE pgcp_replicas (
        id            text PRIMARY KEY,
        started_at    timestamptz NOT NULL DEFAULT now(),
        heartbeat_at  timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
  {
    version: 2,
    name: "operations archive",
    sql: `
      CREATE TABLE pgcp_operations (
        project_id        text NOT NULL,
        operation_id      text NOT NULL,
        branch_id         text,
        endpoint_id       text,
        action            text NOT NULL,
        status            text NOT NULL,
        failures_count    integer NOT NULL,
        error             text,
        created_at        timestamptz NOT NULL,
        updated_at        timestamptz NOT NULL,
        total_duration_ms bigint NOT NULL,
        archived_at       timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, operation_id)
      );
      CREATE INDEX pgcp_operations_created_at ON pgcp_operations (created_at);
    `,
  },
];

/** The newest schema version this build knows. */
export const SCHEMA_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));

/** The schema is newer than this build: refusing is safer than writing a format it misreads. */
export class SchemaVersionError extends Error {
  override readonly name = "SchemaVersionError";

  constructor(readonly found: number) {
    super(
      `the database's pgcp-exporter schema is at version ${found}, newer than this build knows (${SCHEMA_VERSION}); run a newer pgcp-exporter`,
    );
  }
}

/**
 * Applies the missing migrations on `client`, inside the transaction it is in (begun with the
 * store's settings, `search_path` among them), and returns the versions applied. Creates
 * `schema` first when it is named and missing. Safe to run from several processes at once: the
 * advisory lock is the transaction's, so it works through a pooler in transaction mode too.
 */
export async function migrate(
  client: ClientBase,
  schema: string | undefined,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  const applied: number[] = [];
  await client.query("SELECT pg_advisory_xact_lock($1, $2)", [...MIGRATION_LOCK]);
  if (schema !== undefined) {
    // Looked up first: `CREATE SCHEMA IF NOT EXISTS` needs the right to create schemas even
    // when the schema exists.
    const found = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
    if (found.rowCount === 0) await client.query(`CREATE SCHEMA ${quoteIdentifier(schema)}`);
  }
  await client.query(`
    CREATE TABLE IF NOT EXISTS pgcp_schema_migrations (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
  const { rows } = await client.query<{ version: number | null }>(
    "SELECT max(version) AS version FROM pgcp_schema_migrations",
  );
  const current = rows[0]?.version ?? 0;
  const newest = Math.max(0, ...migrations.map((m) => m.version));
  if (current > newest) throw new SchemaVersionError(current);
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    if (migration.version <= current) continue;
    await client.query(migration.sql);
    await client.query("INSERT INTO pgcp_schema_migrations (version, name) VALUES ($1, $2)", [
      migration.version,
      migration.name,
    ]);
    applied.push(migration.version);
  }
  return applied;
}
