/**
 * The Postgres state store (`state.url: postgres://…`), for several replicas sharing the
 * projects through leases (`src/leases`).
 *
 * Each project's state is one row of `pgcp_project_state`: the same document the file store
 * writes (validated the same way on load), with its sequence, the fencing token of the lease
 * it was committed under, the replica that committed it and when. A commit is one transaction
 * that
 *   1. locks the project's lease row and checks that it still names this replica with the
 *      commit's fencing token and has not expired by the database's clock (`FenceCheck`),
 *   2. writes the document only over the sequence it builds on (so a commit can never undo
 *      another one, even one made under no lease),
 *   3. upserts the operations the commit counts into the archive (`history: postgres`),
 * and writes all of it or nothing: the checkpoint, the counter totals, the outbox and the
 * archive rows always agree (invariant 2, docs/design.md). A rejected commit throws
 * `LeaseLostError`.
 *
 * The lease row's lock is held only for the commit's few statements. A process paused in the
 * middle of a commit cannot hold it for long: the server ends a transaction that stays idle
 * longer than `idleInTransactionTimeoutMs` (set well under the lease), and with it the lock.
 * Once the process runs again, that commit fails with the server's reason and its connection
 * is dropped.
 *
 * Every statement runs in a transaction that sets its own timeouts and schema
 * (`postgres-transaction.ts`), so the store works unchanged through a pooler in transaction mode.
 */
import pg from "pg";
import type { ClientBase, Pool } from "pg";
import { RESOURCE_ID_PATTERN } from "../contract/index.js";
import { displayUrl } from "./display-url.js";
import { describe } from "./fs-primitives.js";
import { archiveRows, upsertOperations } from "./operations-archive.js";
import type { CommitDetails } from "./commit-details.js";
import { LeaseLostError, type CommitFence } from "./fencing.js";
import { migrate } from "./migrations.js";
import type { ProjectState } from "./project-state.js";
import {
  inTransaction,
  transactionalQueries,
  type Queryable,
  type TransactionSettings,
} from "./postgres-transaction.js";
import { parseStateDocument } from "./state-document.js";
import { StateFileError, type StateStore } from "./state-store.js";

export interface PostgresStoreOptions {
  /** `postgres://user@host:port/database?…`; libpq's PG* variables fill what it leaves out. */
  readonly url: string;
  /** Upsert each poll's ended operations into `pgcp_operations` (`history: postgres`). */
  readonly archive?: boolean;
  /** Connections in the pool (default 4). */
  readonly maxConnections?: number;
  /** The server ends a transaction idle this long (default 10 s; keep it well under the lease). */
  readonly idleInTransactionTimeoutMs?: number;
  /** Longest statement (default 30 s). */
  readonly statementTimeoutMs?: number;
  /** How long to wait for a connection (default 10 s). */
  readonly connectTimeoutMs?: number;
  /** The schema of the store's tables (created if missing); default: the role's search path. */
  readonly schema?: string | undefined;
  /** Hears errors of idle connections (a restarted server); without it they are ignored. */
  readonly onPoolError?: (error: Error) => void;
}

export class PostgresStateStore implements StateStore {
  readonly kind = "postgres";
  /** Loads and commits. */
  readonly pool: Pool;
  /**
   * Two connections of their own for the lease heartbeats, so that renewals never queue
   * behind commits when every connection of `pool` is busy.
   */
  readonly controlPool: Pool;
  /** Statements on `controlPool`, each in a transaction with the store's settings. */
  readonly control: Queryable;
  /** What each transaction sets: its timeouts and the schema. */
  readonly settings: TransactionSettings;
  /** Where the store is, without credentials (for logs and errors). */
  readonly location: string;
  readonly archive: boolean;
  /** Statements on `pool`, each in a transaction with the store's settings. */
  readonly #queries: Queryable;
  #opened: Promise<void> | undefined;
  #isOpen = false;
  #closed = false;

  constructor(options: PostgresStoreOptions) {
    // `postgres://host:port/database`: the address without user, password or parameters.
    this.location = displayUrl(options.url, "postgres://(unparsable address)");
    this.archive = options.archive ?? false;
    this.settings = {
      statementTimeoutMs: options.statementTimeoutMs ?? 30_000,
      idleInTransactionTimeoutMs: options.idleInTransactionTimeoutMs ?? 10_000,
      schema: options.schema,
    };
    // No startup parameter but the application's name: poolers refuse the others.
    const connection = {
      connectionString: options.url,
      application_name: "pgcp-exporter",
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    };
    this.pool = new pg.Pool({ ...connection, max: options.maxConnections ?? 4 });
    this.controlPool = new pg.Pool({ ...connection, max: 2 });
    this.control = transactionalQueries(this.controlPool, this.settings);
    this.#queries = transactionalQueries(this.pool, this.settings);
    // An idle connection that breaks (the server restarts) must not crash the process.
    for (const pool of [this.pool, this.controlPool]) {
      pool.on("error", (error) => {
        options.onPoolError?.(error);
      });
    }
  }

  /** True once the schema is migrated. */
  get isOpen(): boolean {
    return this.#isOpen;
  }

  /**
   * Connects and migrates the schema (once; concurrent callers share the attempt, and a failed
   * attempt is made again by the next call).
   */
  open(): Promise<void> {
    this.#opened ??= (async () => {
      await inTransaction(this.pool, this.settings, (client) =>
        migrate(client, this.settings.schema),
      );
      this.#isOpen = true;
    })().catch((error: unknown) => {
      this.#opened = undefined;
      throw error;
    });
    return this.#opened;
  }

  /** Names a project's row in errors and logs. */
  rowFor(projectId: string): string {
    if (!RESOURCE_ID_PATTERN.test(projectId)) {
      throw new Error(`not a project id: ${JSON.stringify(projectId)}`);
    }
    return `${this.location} pgcp_project_state[${projectId}]`;
  }

  async load(projectId: string): Promise<ProjectState | undefined> {
    const row = this.rowFor(projectId);
    let found: { text: string; sequence: string } | undefined;
    try {
      await this.open();
      const result = await this.#queries.query<{ text: string; sequence: string }>(
        "SELECT document::text AS text, sequence::text AS sequence FROM pgcp_project_state WHERE project_id = $1",
        [projectId],
      );
      found = result.rows[0];
    } catch (cause) {
      // The project waits (blocked) and tries again at its next poll.
      throw new StateFileError(row, "unreadable", `cannot read the state row: ${describe(cause)}`);
    }
    if (found === undefined) return undefined;
    const state = parseStateRow(row, found.text, projectId);
    if (String(state.sequence) !== found.sequence) {
      throw new StateFileError(
        row,
        "corrupt",
        `the state row's sequence ${found.sequence} differs from its document's ${String(state.sequence)}`,
      );
    }
    return state;
  }

  /**
   * A commit under no lease (a single writer: tools and tests). It still writes only over the
   * sequence it builds on. The daemon always commits through `commitFenced`.
   */
  commit(state: ProjectState, details?: CommitDetails): Promise<void> {
    return this.write(state, details, undefined);
  }

  /** A commit under `fence`: rejected with `LeaseLostError` unless the lease is still current. */
  commitFenced(
    state: ProjectState,
    details: CommitDetails | undefined,
    fence: CommitFence,
  ): Promise<void> {
    return this.write(state, details, fence);
  }

  async projects(): Promise<string[]> {
    await this.open();
    const { rows } = await this.#queries.query<{ project_id: string }>(
      "SELECT project_id FROM pgcp_project_state ORDER BY project_id",
    );
    return rows.map((r) => r.project_id).filter((id) => RESOURCE_ID_PATTERN.test(id));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([this.pool.end(), this.controlPool.end()]);
  }

  private async write(
    state: ProjectState,
    details: CommitDetails | undefined,
    fence: CommitFence | undefined,
  ): Promise<void> {
    const projectId = state.projectId;
    this.rowFor(projectId);
    await this.open();
    await inTransaction(this.pool, this.settings, async (client) => {
      if (fence !== undefined) await checkFence(client, projectId, fence);
      const written =
        state.sequence === 1
          ? await client.query(
              `INSERT INTO pgcp_project_state
                 (project_id, document, sequence, fencing_token, committed_by, committed_at)
               VALUES ($1, $2::jsonb, $3, $4, $5, clock_timestamp())
               ON CONFLICT (project_id) DO NOTHING`,
              [projectId, JSON.stringify(state), 1, fence?.token ?? null, fence?.holder ?? null],
            )
          : await client.query(
              `UPDATE pgcp_project_state
                 SET document = $2::jsonb, sequence = $3, fencing_token = $4, committed_by = $5,
                     committed_at = clock_timestamp()
               WHERE project_id = $1 AND sequence = $3 - 1`,
              [
                projectId,
                JSON.stringify(state),
                state.sequence,
                fence?.token ?? null,
                fence?.holder ?? null,
              ],
            );
      if (written.rowCount !== 1) {
        throw new LeaseLostError(
          projectId,
          "stale_state",
          fence,
          `the stored state is not at sequence ${String(state.sequence - 1)}, which this commit builds on`,
        );
      }
      if (this.archive && details !== undefined) {
        await upsertOperations(client, archiveRows(details.ended));
      }
    });
  }
}

/**
 * Locks the project's lease row for the rest of the transaction and throws `LeaseLostError`
 * unless it names `fence` and is live by the database's clock. A claim by another replica
 * waits for (or skips) the lock, so it cannot slip in between this check and the commit.
 */
async function checkFence(client: ClientBase, projectId: string, fence: CommitFence) {
  const { rows } = await client.query<{ holder: string | null; token: string; live: boolean }>(
    `SELECT holder, fencing_token::text AS token, expires_at > clock_timestamp() AS live
       FROM pgcp_leases WHERE project_id = $1 FOR SHARE`,
    [projectId],
  );
  const lease = rows[0];
  if (lease === undefined) {
    throw new LeaseLostError(projectId, "missing", fence, "the project has no lease");
  }
  const token = Number(lease.token);
  if (lease.holder === null && token === fence.token) {
    throw new LeaseLostError(projectId, "released", fence, "the lease was released");
  }
  if (lease.holder !== fence.holder || token !== fence.token) {
    throw new LeaseLostError(
      projectId,
      "taken",
      fence,
      `the lease is now ${lease.holder === null ? "free" : `held by ${lease.holder}`} with fencing token ${lease.token}, not ${fence.holder}'s token ${String(fence.token)}`,
    );
  }
  if (!lease.live) {
    throw new LeaseLostError(
      projectId,
      "expired",
      fence,
      "the lease expired (by the database's clock)",
    );
  }
}

/** Validates a stored document; never returns one it cannot vouch for. */
export function parseStateRow(row: string, text: string, projectId: string): ProjectState {
  return parseStateDocument(text, projectId, { location: row, noun: "the state row" });
}
