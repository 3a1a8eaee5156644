/**
 * What is wrong with the Postgres store, said where the cause is: the server (or a pooler in
 * front of it) refuses the credentials, the database does not exist, the role lacks a right,
 * the schema is a newer build's, or the server cannot be reached. `check-config --connect`
 * checks all of it without writing (`checkPostgresStore`); `run` refuses to start on a problem
 * that only an operator can mend (`isRefusal`), and rides through an unreachable server.
 */
import { describe } from "./fs-primitives.js";
import { SCHEMA_VERSION, SchemaVersionError } from "./migrations.js";
import type { PostgresStateStore } from "./postgres-store.js";
import { inTransaction } from "./postgres-transaction.js";

export type StoreProblemKind =
  "authentication" | "no_database" | "no_rights" | "newer_schema" | "unreachable" | "other";

export interface StoreProblem {
  readonly kind: StoreProblemKind;
  /** One line, naming the cause and what to check; never a password. */
  readonly message: string;
}

/** An error of the store (or its driver) as the problem it shows, said for `location`. */
export function storeProblem(error: unknown, location: string): StoreProblem {
  if (error instanceof SchemaVersionError) {
    return { kind: "newer_schema", message: `${location}: ${error.message}` };
  }
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === "string" ? message : describe(error);
  const said = (kind: StoreProblemKind, what: string) => ({
    kind,
    message: `${location}: ${what} (${text})`,
  });
  // PgBouncer answers its own refusals with 08P01 and says which in the message.
  if (code === "28P01" || code === "28000" || isPoolerRefusal(code, text, /authentication|user/i)) {
    return said(
      "authentication",
      "the server refuses the credentials: check the user and password of state.url (or PGPASSWORD)",
    );
  }
  if (code === "3D000" || isPoolerRefusal(code, text, /database .*(does not exist|not found)/i)) {
    return said("no_database", "the database does not exist: check the database of state.url");
  }
  if (code === "42501") {
    return said(
      "no_rights",
      "the role lacks a right the store needs (see docs/scale-out.md#running-it)",
    );
  }
  if (
    typeof code !== "string" ||
    code.startsWith("08") ||
    code === "57P03" ||
    !/^[0-9A-Z]{5}$/.test(code)
  ) {
    return said("unreachable", "the server cannot be reached");
  }
  return said("other", "the server answers with an error");
}

function isPoolerRefusal(code: unknown, text: string, pattern: RegExp): boolean {
  return code === "08P01" && pattern.test(text);
}

/**
 * A problem that will not mend itself: the daemon refuses to start on it, rather than run
 * without committing anything. An unreachable server may come up later, and is ridden through.
 */
export function isRefusal(problem: StoreProblem): boolean {
  return problem.kind !== "unreachable" && problem.kind !== "other";
}

/** What `checkPostgresStore` found. */
export type StoreCheck =
  | { readonly ok: true; readonly summary: string }
  | { readonly ok: false; readonly problem: StoreProblem };

/** The tables the daemon writes, and the archive's when `history: postgres`. */
const TABLES = ["pgcp_project_state", "pgcp_leases", "pgcp_replicas"] as const;
const RIGHTS = ["SELECT", "INSERT", "UPDATE", "DELETE"] as const;

/**
 * Connects, and checks without writing anything that the store can be used: the schema's
 * version (none yet, this build's, an older one to migrate, or a newer build's) and the role's
 * rights on the tables, or to create them.
 */
export async function checkPostgresStore(store: PostgresStateStore): Promise<StoreCheck> {
  const fail = (kind: StoreProblemKind, what: string): StoreCheck => ({
    ok: false,
    problem: { kind, message: `${store.location}: ${what}` },
  });
  try {
    return await inTransaction(store.pool, store.settings, async (client) => {
      const { rows } = await client.query<{
        role: string;
        schema: string | null;
        migrated: boolean;
        may_create_schema: boolean;
      }>(
        `SELECT current_user AS role, current_schema() AS schema,
                to_regclass('pgcp_schema_migrations') IS NOT NULL AS migrated,
                has_database_privilege(current_database(), 'CREATE') AS may_create_schema`,
      );
      const found = rows[0];
      if (found === undefined) throw new Error("the server answered no row");
      const wanted = store.settings.schema;
      if (found.schema === null) {
        // The schema named (or the first of the search path) does not exist yet.
        if (wanted !== undefined && found.may_create_schema) {
          return {
            ok: true,
            summary: `role ${found.role}; schema ${wanted} will be created, with version ${String(SCHEMA_VERSION)}`,
          };
        }
        return fail(
          "no_rights",
          wanted === undefined
            ? `no schema of role ${found.role}'s search_path exists: set state.schema`
            : `schema ${wanted} does not exist, and role ${found.role} may not create it`,
        );
      }
      const schema = found.schema;
      const mayCreate = await client.query<{ ok: boolean }>(
        "SELECT has_schema_privilege($1, 'CREATE') AS ok",
        [schema],
      );
      const canCreateTables = mayCreate.rows[0]?.ok === true;
      if (!found.migrated) {
        return canCreateTables
          ? {
              ok: true,
              summary: `role ${found.role}; schema ${schema} is empty: its tables will be created (version ${String(SCHEMA_VERSION)})`,
            }
          : fail(
              "no_rights",
              `role ${found.role} may not create the store's tables in schema ${schema}`,
            );
      }
      const version = await client.query<{ version: number | null }>(
        "SELECT max(version) AS version FROM pgcp_schema_migrations",
      );
      const current = version.rows[0]?.version ?? 0;
      if (current > SCHEMA_VERSION) {
        return fail("newer_schema", new SchemaVersionError(current).message);
      }
      if (current < SCHEMA_VERSION && !canCreateTables) {
        return fail(
          "no_rights",
          `the schema is at version ${String(current)}, and role ${found.role} may not migrate it to ${String(SCHEMA_VERSION)} (no CREATE on schema ${schema})`,
        );
      }
      const missing: string[] = [];
      const tables = [...TABLES, ...(store.archive ? ["pgcp_operations"] : [])];
      for (const table of tables) {
        for (const right of RIGHTS) {
          // A table a later migration adds is not there yet: its rights come with it.
          const held = await client.query<{ ok: boolean | null }>(
            `SELECT CASE WHEN to_regclass($1) IS NULL THEN NULL
                         ELSE has_table_privilege(to_regclass($1), $2) END AS ok`,
            [table, right],
          );
          if (held.rows[0]?.ok === false) missing.push(`${right} on ${table}`);
        }
      }
      if (missing.length > 0) {
        return fail("no_rights", `role ${found.role} lacks ${missing.join(", ")}`);
      }
      const migration =
        current < SCHEMA_VERSION ? `, to be migrated to ${String(SCHEMA_VERSION)}` : "";
      return {
        ok: true,
        summary: `role ${found.role}; schema ${schema} at version ${String(current)}${migration}`,
      };
    });
  } catch (error) {
    return { ok: false, problem: storeProblem(error, store.location) };
  }
}
