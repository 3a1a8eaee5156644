/**
 * How the Postgres store talks to its database so that it works the same directly and through a
 * pooler in transaction mode (PgBouncer, the pooled connection strings of managed Postgres, RDS
 * Proxy): every statement runs in a transaction of its own making, which carries all the
 * session settings it needs.
 *
 * - No startup parameters beyond `application_name`: poolers refuse others
 *   (`unsupported startup parameter`).
 * - No session state: a pooler hands each transaction whichever server connection is free, so
 *   the timeouts and the schema are set with `SET LOCAL` at the start of every transaction, in
 *   the same round trip as its `BEGIN`.
 * - No named prepared statements (the driver's parameterised queries use the unnamed one) and
 *   no session advisory locks (migrations take a transaction-scoped one).
 * - A pooler may close a connection it finds idle. A transaction whose first round trip fails
 *   because its connection was closed has done nothing, and is tried once more on a new one.
 */
import type { ClientBase, Pool, PoolClient, QueryResult, QueryResultRow } from "pg";
import { LeaseLostError } from "./fencing.js";

/** What every transaction sets for itself. */
export interface TransactionSettings {
  /** Longest statement (`statement_timeout`). */
  readonly statementTimeoutMs: number;
  /**
   * The server ends a transaction idle this long (`idle_in_transaction_session_timeout`): a
   * paused process cannot hold a lease row's lock for long.
   */
  readonly idleInTransactionTimeoutMs: number;
  /** The schema of the store's tables; undefined: the first schema of the role's search path. */
  readonly schema?: string | undefined;
}

/** A schema name the store accepts (an unquoted SQL identifier: it is quoted anyway). */
export const SCHEMA_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** The first round trip of every transaction: `BEGIN` and its `SET LOCAL`s. */
export function beginStatement(settings: TransactionSettings): string {
  const parts = [
    "BEGIN",
    `SET LOCAL statement_timeout = ${String(Math.max(1, Math.round(settings.statementTimeoutMs)))}`,
    `SET LOCAL idle_in_transaction_session_timeout = ${String(Math.max(1, Math.round(settings.idleInTransactionTimeoutMs)))}`,
  ];
  if (settings.schema !== undefined) {
    parts.push(`SET LOCAL search_path = ${quoteIdentifier(settings.schema)}`);
  }
  return parts.join("; ");
}

/** `name` as a quoted SQL identifier. */
export function quoteIdentifier(name: string): string {
  if (!SCHEMA_NAME_PATTERN.test(name))
    throw new Error(`not a schema name: ${JSON.stringify(name)}`);
  return `"${name}"`;
}

/** One statement, as `pg`'s `query` takes it. */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(
    sql: string,
    params?: unknown[],
  ): Promise<QueryResult<R>>;
}

/**
 * Runs `work` in one transaction on a connection of `pool`, and commits it; rolls back and
 * rethrows when `work` throws. A connection that broke is destroyed, not returned to the pool.
 * The error thrown is the server's own reason when the server ended the connection.
 */
export async function inTransaction<T>(
  pool: Pool,
  settings: TransactionSettings,
  work: (client: ClientBase) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect();
    const heard = listenWhileCheckedOut(client);
    let broken: Error | undefined;
    let begun = false;
    try {
      await client.query(beginStatement(settings));
      begun = true;
      const result = await work(client);
      await client.query("COMMIT");
      begun = false;
      return result;
    } catch (error) {
      if (begun) {
        await client.query("ROLLBACK").catch((cause: unknown) => {
          broken = asError(cause);
        });
      }
      // A lease check that failed leaves the connection sound.
      if (!(error instanceof LeaseLostError) && isConnectionError(error)) broken = asError(error);
      // The connection was gone before the transaction began (a pooler closed it while it was
      // idle): nothing was done, so a new connection may do it.
      const retry = !begun && broken !== undefined && attempt === 1;
      if (!retry) throw error instanceof LeaseLostError ? error : (heard.error() ?? error);
    } finally {
      heard.release(broken);
    }
  }
}

/** A `Queryable` whose every statement is a transaction of its own, with `settings`. */
export function transactionalQueries(pool: Pool, settings: TransactionSettings): Queryable {
  return {
    query: <R extends QueryResultRow>(sql: string, params?: unknown[]) =>
      inTransaction(pool, settings, (client) => client.query<R>(sql, params)),
  };
}

interface CheckedOut {
  /** What ended the connection, when the server did (the next query fails with less). */
  error(): Error | undefined;
  /** Returns the connection to the pool, or destroys it if it broke. */
  release(broken: Error | undefined): void;
}

/**
 * Listens for the errors `client` emits while it is checked out, and releases it. pg's pool
 * stops listening to a connection it lends, and a connection the server ends between two
 * queries emits an error event (the idle-in-transaction timeout ends a transaction whose
 * process was paused: its last answer and the server's notice then arrive together). Nobody
 * hearing it would crash the process. Heard, it fails the next query, and `release` destroys
 * the connection rather than returning it to the pool.
 */
function listenWhileCheckedOut(client: PoolClient): CheckedOut {
  let heard: Error | undefined;
  const listener = (error: Error): void => {
    heard ??= error;
  };
  client.on("error", listener);
  return {
    error: () => heard,
    release(broken) {
      const error = broken ?? heard;
      client.release(error);
      // A sound connection goes back to the pool, which listens to it again; a broken one is
      // ended, and keeps this listener for whatever it still emits.
      if (error === undefined) client.off("error", listener);
    },
  };
}

/**
 * The connection is unusable (server gone, session ended, pooler closed it): do not return it
 * to the pool. An error the server answered with a SQLSTATE of another class leaves it sound.
 */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) {
    // Class 08: connection exceptions; 57P0x: the server is shutting down or ended the session.
    return code.startsWith("08") || code.startsWith("57P") || code === "25P03";
  }
  // No SQLSTATE: a socket error (ECONNRESET, EPIPE) or the driver's "Connection terminated".
  return true;
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
