import pg from "pg";
import { OTHER_FILE_CACHE_COLUMNS, type ExtensionMode } from "./modes.js";
import { SIMULATOR_APPLICATION_NAME } from "./options.js";

/**
 * What the compute host keeps on the PostgreSQL server, in the clients' database:
 *
 * - a schema of its own (`pgcp_sim_<tag>`, a random tag per simulator, so that simulators
 *   sharing a server never meet) with the computes' statistics (`computes`), the map from the
 *   local port of each forwarded session to its endpoint (`client_ports`: the server sees it
 *   as `client_port`), and the functions below;
 * - per endpoint, a schema (`pgcp_sim_<tag>_e<n>`) that its sessions have in their
 *   `search_path` before `pg_catalog`, holding what a compute of its own would show: the view
 *   `neon_stat_file_cache` (the `neon` extension's; absent, or with other columns, when a test
 *   says so), `pg_stat_activity` and `pg_stat_database` limited to the endpoint's sessions,
 *   and `pg_postmaster_start_time()` answering the compute's start.
 *
 * Every object the endpoint's sessions read passes through `gate(endpoint)`, which sleeps
 * while the endpoint's statements are to hang.
 */

/** One endpoint's row of statistics, as written to the `computes` table. */
export interface ComputeRow {
  readonly endpointId: string;
  readonly startedAt: Date | null;
  readonly misses: number;
  readonly hits: number;
  readonly used: number;
  readonly writes: number;
  readonly hang: boolean;
}

/** A client backend of a forwarded session, as `pg_stat_activity` shows it. */
export interface BackendRow {
  readonly pid: number;
  readonly clientPort: number;
  readonly state: string | null;
  readonly applicationName: string;
  /** `state_change` in milliseconds since the epoch (the server's clock). */
  readonly stateChangeMs: number | null;
}

/** How long a change of an endpoint's view waits for the sessions reading it. */
const DDL_LOCK_TIMEOUT = "2s";

const ident = (name: string): string => pg.escapeIdentifier(name);
const literal = (text: string): string => pg.escapeLiteral(text);

/** A URL of the same server and user, for another database. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

/**
 * The server-wide part, done once at start with the admin URL's own database: the clients'
 * database (created if missing) and the clients' role (created, or its password and login
 * updated), which may connect and read every session's activity (as a compute's own
 * superuser role may).
 */
export async function prepareServer(
  adminUrl: string,
  database: string,
  role: { readonly name: string; readonly password: string } | undefined,
): Promise<void> {
  const client = new pg.Client({
    connectionString: adminUrl,
    application_name: SIMULATOR_APPLICATION_NAME,
  });
  client.on("error", () => undefined);
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_catalog.pg_database WHERE datname = $1", [
      database,
    ]);
    if (found.rowCount === 0) {
      await ignoring("42P04", client.query(`CREATE DATABASE ${ident(database)}`));
    }
    if (role === undefined) return;
    if (role.name === client.user) {
      throw new RangeError("the clients' role must not be the admin URL's user");
    }
    const password = literal(role.password);
    const existing = await client.query<{ rolsuper: boolean }>(
      "SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = $1",
      [role.name],
    );
    if (existing.rows[0]?.rolsuper === true) {
      throw new RangeError(`the clients' role ${role.name} is a superuser: choose another`);
    }
    if (existing.rowCount === 0) {
      await ignoring(
        "42710",
        client.query(`CREATE ROLE ${ident(role.name)} LOGIN PASSWORD ${password}`),
      );
    }
    await client.query(`ALTER ROLE ${ident(role.name)} WITH LOGIN PASSWORD ${password}`);
    await client.query(`GRANT CONNECT ON DATABASE ${ident(database)} TO ${ident(role.name)}`);
    await client.query(`GRANT pg_read_all_stats TO ${ident(role.name)}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Awaits a statement, taking the error of one SQLSTATE (a lost race) as success. */
async function ignoring(sqlState: string, statement: Promise<unknown>): Promise<void> {
  try {
    await statement;
  } catch (error) {
    if (!(error instanceof Error && "code" in error && error.code === sqlState)) throw error;
  }
}

/** The compute host's objects in the clients' database, and the statements on them. */
export class Catalog {
  private readonly s: string;

  constructor(
    private readonly pool: pg.Pool,
    /** The host's own schema. */
    readonly schema: string,
  ) {
    this.s = ident(schema);
  }

  /** The schema of the endpoint with address number `n`. */
  endpointSchema(n: number): string {
    return `${this.schema}_e${n}`;
  }

  async create(): Promise<void> {
    const s = this.s;
    const gate = `${s}.gate`;
    await this.transaction([
      `CREATE SCHEMA ${s}`,
      // The endpoints' sessions call the functions below through their views.
      `GRANT USAGE ON SCHEMA ${s} TO PUBLIC`,
      `CREATE TABLE ${s}.computes (
         endpoint_id text PRIMARY KEY,
         started_at timestamptz,
         file_cache_misses bigint NOT NULL DEFAULT 0,
         file_cache_hits bigint NOT NULL DEFAULT 0,
         file_cache_used bigint NOT NULL DEFAULT 0,
         file_cache_writes bigint NOT NULL DEFAULT 0,
         hang boolean NOT NULL DEFAULT false)`,
      `CREATE TABLE ${s}.client_ports (
         port integer PRIMARY KEY,
         endpoint_id text NOT NULL,
         session bigint NOT NULL)`,
      `CREATE FUNCTION ${gate}(endpoint text) RETURNS boolean
         LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
       BEGIN
         WHILE EXISTS (SELECT 1 FROM ${s}.computes c WHERE c.endpoint_id = endpoint AND c.hang) LOOP
           PERFORM pg_sleep(0.05);
         END LOOP;
         RETURN true;
       END $$`,
      `CREATE FUNCTION ${s}.file_cache(endpoint text)
         RETURNS TABLE (file_cache_misses bigint, file_cache_hits bigint, file_cache_used bigint,
                        file_cache_writes bigint, file_cache_hit_ratio numeric)
         LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
       #variable_conflict use_column
       BEGIN
         PERFORM ${gate}(endpoint);
         RETURN QUERY
           SELECT c.file_cache_misses, c.file_cache_hits, c.file_cache_used, c.file_cache_writes,
                  CASE WHEN c.file_cache_hits + c.file_cache_misses = 0 THEN NULL
                       ELSE round(c.file_cache_hits::numeric * 100
                                  / (c.file_cache_hits + c.file_cache_misses), 2) END
           FROM ${s}.computes c WHERE c.endpoint_id = endpoint;
       END $$`,
      `CREATE FUNCTION ${s}.started_at(endpoint text) RETURNS timestamptz
         LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
       BEGIN
         PERFORM ${gate}(endpoint);
         RETURN (SELECT c.started_at FROM ${s}.computes c WHERE c.endpoint_id = endpoint);
       END $$`,
    ]);
  }

  /** The endpoint's schema, with its view as `mode` says. */
  async createEndpoint(n: number, endpointId: string, mode: ExtensionMode): Promise<void> {
    const s = this.s;
    const e = ident(this.endpointSchema(n));
    const ep = literal(endpointId);
    const columns = await this.pool.query<{ attname: string }>(
      `SELECT attname FROM pg_catalog.pg_attribute
        WHERE attrelid = 'pg_catalog.pg_stat_database'::regclass AND attnum > 0 AND NOT attisdropped
        ORDER BY attnum`,
    );
    const databaseColumns = columns.rows.map((r) =>
      r.attname === "numbackends"
        ? `(SELECT count(*) FROM ${e}.pg_stat_activity a
             WHERE a.datid = d.datid AND a.backend_type = 'client backend')::integer AS numbackends`
        : `d.${ident(r.attname)}`,
    );
    await this.transaction([
      `CREATE SCHEMA ${e}`,
      `GRANT USAGE ON SCHEMA ${e} TO PUBLIC`,
      `CREATE VIEW ${e}.pg_stat_activity AS
         SELECT a.* FROM ${s}.gate(${ep}) AS g, pg_catalog.pg_stat_activity a
          WHERE a.backend_type IS DISTINCT FROM 'client backend'
             OR a.client_port IN (SELECT p.port FROM ${s}.client_ports p WHERE p.endpoint_id = ${ep})`,
      `CREATE VIEW ${e}.pg_stat_database AS
         SELECT ${databaseColumns.join(", ")} FROM pg_catalog.pg_stat_database d`,
      `CREATE FUNCTION ${e}.pg_postmaster_start_time() RETURNS timestamptz
         LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
         AS $$ SELECT ${s}.started_at(${ep}) $$`,
      `INSERT INTO ${s}.computes (endpoint_id) VALUES (${ep}) ON CONFLICT DO NOTHING`,
      ...fileCacheView(s, e, ep, mode),
      `GRANT SELECT ON ALL TABLES IN SCHEMA ${e} TO PUBLIC`,
    ]);
  }

  /** Replaces the endpoint's view; fails when its sessions hold it longer than a moment. */
  async setExtension(n: number, endpointId: string, mode: ExtensionMode): Promise<void> {
    const e = ident(this.endpointSchema(n));
    await this.transaction([
      `SET LOCAL lock_timeout = '${DDL_LOCK_TIMEOUT}'`,
      `DROP VIEW IF EXISTS ${e}.neon_stat_file_cache`,
      ...fileCacheView(this.s, e, literal(endpointId), mode),
    ]);
  }

  async dropEndpoint(n: number, endpointId: string): Promise<void> {
    await this.transaction([
      `DROP SCHEMA IF EXISTS ${ident(this.endpointSchema(n))} CASCADE`,
      `DELETE FROM ${this.s}.computes WHERE endpoint_id = ${literal(endpointId)}`,
    ]);
  }

  /** Drops every schema of the host (the endpoints' given by their numbers). */
  async dropAll(endpointNumbers: Iterable<number>): Promise<void> {
    const schemas = [...endpointNumbers].map((n) => ident(this.endpointSchema(n)));
    await this.pool.query(`DROP SCHEMA IF EXISTS ${[...schemas, this.s].join(", ")} CASCADE`);
  }

  async writeComputes(rows: readonly ComputeRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.pool.query(
      `INSERT INTO ${this.s}.computes AS c (endpoint_id, started_at, file_cache_misses,
              file_cache_hits, file_cache_used, file_cache_writes, hang)
       SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::int8[], $4::int8[], $5::int8[],
                            $6::int8[], $7::bool[])
       ON CONFLICT (endpoint_id) DO UPDATE SET
         started_at = EXCLUDED.started_at, file_cache_misses = EXCLUDED.file_cache_misses,
         file_cache_hits = EXCLUDED.file_cache_hits, file_cache_used = EXCLUDED.file_cache_used,
         file_cache_writes = EXCLUDED.file_cache_writes, hang = EXCLUDED.hang`,
      [
        rows.map((r) => r.endpointId),
        rows.map((r) => r.startedAt),
        rows.map((r) => r.misses),
        rows.map((r) => r.hits),
        rows.map((r) => r.used),
        rows.map((r) => r.writes),
        rows.map((r) => r.hang),
      ],
    );
  }

  /** Session number `session`, on upstream local port `port`, is the endpoint's. */
  async registerPort(port: number, endpointId: string, session: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.s}.client_ports (port, endpoint_id, session) VALUES ($1, $2, $3)
       ON CONFLICT (port) DO UPDATE SET endpoint_id = EXCLUDED.endpoint_id,
                                        session = EXCLUDED.session`,
      [port, endpointId, session],
    );
  }

  /** Forgets the ports of ended sessions (a port taken again by a later session stays). */
  async forgetPorts(ended: readonly { readonly port: number; readonly session: number }[]) {
    if (ended.length === 0) return;
    await this.pool.query(
      `DELETE FROM ${this.s}.client_ports
        WHERE (port, session) IN (SELECT * FROM unnest($1::int[], $2::int8[]))`,
      [ended.map((e) => e.port), ended.map((e) => e.session)],
    );
  }

  /** The client backends of the forwarded sessions on these upstream ports. */
  async backends(ports: readonly number[]): Promise<BackendRow[]> {
    if (ports.length === 0) return [];
    const result = await this.pool.query<{
      pid: number;
      client_port: number;
      state: string | null;
      application_name: string | null;
      state_change_ms: number | null;
    }>(
      `SELECT pid, client_port, state, application_name,
              (extract(epoch FROM state_change) * 1000)::float8 AS state_change_ms
         FROM pg_catalog.pg_stat_activity
        WHERE backend_type = 'client backend' AND client_port = ANY($1::int[])`,
      [ports],
    );
    return result.rows.map((r) => ({
      pid: r.pid,
      clientPort: r.client_port,
      state: r.state,
      applicationName: r.application_name ?? "",
      stateChangeMs: r.state_change_ms,
    }));
  }

  /** Ends the backends of the forwarded sessions on these upstream ports, as a stop does. */
  async terminate(ports: readonly number[]): Promise<void> {
    if (ports.length === 0) return;
    await this.pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity
        WHERE backend_type = 'client backend' AND client_port = ANY($1::int[])
          AND pid <> pg_backend_pid()`,
      [ports],
    );
  }

  private async transaction(statements: readonly string[]): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      for (const statement of statements) await client.query(statement);
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}

/** The statements that give schema `e` its `neon_stat_file_cache` (none when missing). */
function fileCacheView(s: string, e: string, ep: string, mode: ExtensionMode): string[] {
  const view = `${e}.neon_stat_file_cache`;
  switch (mode) {
    case "missing":
      return [];
    case "installed":
      return [
        `CREATE VIEW ${view} AS SELECT * FROM ${s}.file_cache(${ep})`,
        `GRANT SELECT ON ${view} TO PUBLIC`,
      ];
    case "other_columns": {
      const [misses, hits, used, writes, ratio] = OTHER_FILE_CACHE_COLUMNS;
      return [
        `CREATE VIEW ${view} AS
           SELECT f.file_cache_misses AS ${misses}, f.file_cache_hits AS ${hits},
                  f.file_cache_used AS ${used}, f.file_cache_writes AS ${writes},
                  f.file_cache_hit_ratio AS ${ratio}
             FROM ${s}.file_cache(${ep}) f`,
        `GRANT SELECT ON ${view} TO PUBLIC`,
      ];
    }
  }
}
