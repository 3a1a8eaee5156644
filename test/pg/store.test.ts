/**
 * The Postgres state store against a real server: versioned migrations (also from several
 * processes at once), the same load and validation rules as the file store, commits that
 * build only on the sequence they expect, fencing by lease (holder, token, expiry by the
 * database's clock), the operations archive written in the same transaction as the state, a
 * transaction the server ends while the process is paused, and a schema of its own. Each runs
 * directly and through a real PgBouncer in transaction pooling mode (sharing a few server
 * connections between all the clients: no session state may leak between transactions), and
 * the store also lives through a pooler that closes idle connections.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  STATE_FORMAT,
  STATE_VERSION,
  StateFileError,
  type ProjectState,
} from "../../src/store/index.js";
import type { EndedOperation } from "../../src/store/commit-details.js";
import { LeaseLostError } from "../../src/store/fencing.js";
import { MIGRATIONS, SCHEMA_VERSION, SchemaVersionError } from "../../src/store/migrations.js";
import { PostgresStateStore } from "../../src/store/postgres-store.js";
import { emptyTotals } from "../../src/sync/index.js";
import { neverPollingSync } from "../support/never-polling-sync.js";
import { startPgBouncer } from "../support/pgbouncer.js";
import {
  createTestDatabase,
  describePg,
  PG_ADMIN_URL,
  PG_ROUTES,
  routed,
  type TestDatabase,
} from "./support.js";

function state(projectId: string, sequence = 1, watermarkSecond = 1_700_000_000): ProjectState {
  return {
    format: STATE_FORMAT,
    version: STATE_VERSION,
    projectId,
    sequence,
    committedAtMs: 1_700_000_000_000 + sequence,
    watermark: { second: watermarkSecond, ids: ["a"] },
    segment: null,
    tracked: [],
    totals: emptyTotals(),
    outbox: [],
    deadLetters: [],
  };
}

function ended(
  projectId: string,
  id: string,
  status: string,
  overrides: Partial<EndedOperation> = {},
): EndedOperation {
  return {
    id,
    projectId,
    branchId: "br-1",
    endpointId: undefined,
    action: "apply_config",
    status,
    failuresCount: 0,
    createdAtMs: 1_700_000_000_000,
    updatedAtMs: 1_700_000_004_000,
    durationMs: 4000,
    error: undefined,
    ...overrides,
  };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (e: unknown) => e,
  );
}

describePg.each(PG_ROUTES)("the Postgres state store (%s)", (route) => {
  let db: TestDatabase;
  const stores: PostgresStateStore[] = [];
  const storeOf = (
    options: { archive?: boolean; idleInTransactionTimeoutMs?: number; schema?: string } = {},
  ) => {
    const store = new PostgresStateStore({ url: routed(db.url, route), ...options });
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    db = await createTestDatabase("pgcp_store");
  });

  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await db.drop();
  });

  it("migrates a fresh database once, even when several processes open it at once", async () => {
    const opening = Array.from({ length: 5 }, () => storeOf());
    await Promise.all(opening.map((s) => s.open()));
    const applied = await db.query<{ version: number; name: string }>(
      "SELECT version, name FROM pgcp_schema_migrations ORDER BY version",
    );
    expect(applied).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
    expect(applied.at(-1)?.version).toBe(SCHEMA_VERSION);
    const tables = await db.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_name LIKE 'pgcp_%' ORDER BY table_name`,
    );
    expect(tables.map((t) => t.table_name)).toEqual([
      "pgcp_leases",
      "pgcp_operations",
      "pgcp_project_state",
      "pgcp_replicas",
      "pgcp_schema_migrations",
    ]);
    // Opening again applies nothing.
    await storeOf().open();
    expect(await db.query("SELECT * FROM pgcp_schema_migrations")).toHaveLength(MIGRATIONS.length);
  });

  it("refuses a database migrated by a newer build, and changes nothing", async () => {
    const newer = await createTestDatabase("pgcp_newer");
    try {
      await newer.query(
        "CREATE TABLE pgcp_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
      );
      await newer.query("INSERT INTO pgcp_schema_migrations (version, name) VALUES (99, 'future')");
      const store = new PostgresStateStore({ url: routed(newer.url, route) });
      try {
        const error = await rejection(store.open());
        expect(error).toBeInstanceOf(SchemaVersionError);
        expect(String(error)).toContain("version 99");
        expect(store.isOpen).toBe(false);
      } finally {
        await store.close();
      }
      const tables = await newer.query("SELECT 1 FROM pg_tables WHERE tablename = 'pgcp_leases'");
      expect(tables).toEqual([]);
    } finally {
      await newer.drop();
    }
  });

  it("returns undefined for a project never committed, and the last commit after it", async () => {
    const store = storeOf();
    expect(await store.load("p-1")).toBeUndefined();
    await store.commit(state("p-1", 1));
    await store.commit(state("p-1", 2, 1_700_000_100));
    expect(await store.load("p-1")).toEqual(state("p-1", 2, 1_700_000_100));
    expect(await store.projects()).toContain("p-1");
    const rows = await db.query<{ sequence: string; fencing_token: string | null }>(
      "SELECT sequence::text, fencing_token::text FROM pgcp_project_state WHERE project_id = 'p-1'",
    );
    expect(rows).toEqual([{ sequence: "2", fencing_token: null }]);
  });

  it("writes a commit only over the sequence it builds on", async () => {
    const store = storeOf();
    await store.commit(state("p-2", 1));
    await store.commit(state("p-2", 2));
    for (const stale of [state("p-2", 2, 1), state("p-2", 1, 1), state("p-2", 5, 1)]) {
      const error = await rejection(store.commit(stale));
      expect(error).toBeInstanceOf(LeaseLostError);
      expect((error as LeaseLostError).reason).toBe("stale_state");
    }
    expect(await store.load("p-2")).toEqual(state("p-2", 2));
  });

  it("lives through the server ending its transaction while the process is paused, and commits again", async () => {
    // The process pauses (SIGSTOP, a long collection, a starved container) while a commit's
    // query is answered: the server ends the idle transaction, and its notice comes in behind
    // the answer, when no query waits for it. Unheard, that error event crashed the daemon.
    const store = storeOf({ idleInTransactionTimeoutMs: 100 });
    await store.open();
    let committed = 0;
    const failures: unknown[] = [];
    const run = { stopped: false };
    const committing = (async () => {
      while (!run.stopped) {
        try {
          await store.commit(state("p-paused", committed + 1));
          committed += 1;
        } catch (error) {
          failures.push(error);
        }
      }
    })();
    const paused = new Int32Array(new SharedArrayBuffer(4));
    for (let pause = 0; pause < 10 && failures.length < 2; pause++) {
      await new Promise((resolve) => setTimeout(resolve, 30));
      Atomics.wait(paused, 0, 0, 400); // the whole event loop stops, as a paused process
    }
    run.stopped = true;
    await committing;
    expect(failures.length).toBeGreaterThan(0);
    for (const failure of failures) {
      // The server's reason, not pg's "not queryable".
      expect(failure).toMatchObject({ code: "25P03" });
    }
    // Nothing half-written, and the next commit goes through on a new connection.
    expect((await store.load("p-paused"))?.sequence).toBe(committed);
    await store.commit(state("p-paused", committed + 1));
    expect((await store.load("p-paused"))?.sequence).toBe(committed + 1);
  });

  it("never takes an unusable row for state, names the row, and never overwrites it", async () => {
    const store = storeOf();
    const cases: [string, string, string][] = [
      ["p-bad-1", JSON.stringify({ ...state("p-bad-1"), watermark: "oops" }), "corrupt"],
      ["p-bad-2", JSON.stringify({ hello: "world" }), "foreign"],
      ["p-bad-3", JSON.stringify({ ...state("p-bad-3"), version: 99 }), "version"],
      ["p-bad-4", JSON.stringify(state("p-other")), "foreign"],
    ];
    for (const [id, document, problem] of cases) {
      await db.query(
        "INSERT INTO pgcp_project_state (project_id, document, sequence) VALUES ($1, $2::jsonb, 1)",
        [id, document],
      );
      const error = await rejection(store.load(id));
      expect(error, id).toBeInstanceOf(StateFileError);
      expect((error as StateFileError).problem, id).toBe(problem);
      expect((error as StateFileError).file).toContain(`pgcp_project_state[${id}]`);
      expect((error as StateFileError).file).not.toContain("postgres@");
    }
    // A project with such a row is blocked: nothing is polled or written.
    const sync = neverPollingSync("p-bad-1", store);
    expect((await sync.step(Date.now())).kind).toBe("blocked");
    const [row] = await db.query<{ document: unknown }>(
      "SELECT document FROM pgcp_project_state WHERE project_id = 'p-bad-1'",
    );
    expect(row?.document).toEqual({ ...state("p-bad-1"), watermark: "oops" });
    // A first commit never replaces a row it did not load either.
    expect(await rejection(store.commit(state("p-bad-2", 1)))).toBeInstanceOf(LeaseLostError);
  });

  it("reports an unreachable server as an unreadable row, which a later poll tries again", async () => {
    const store = new PostgresStateStore({
      url: "postgres://nobody@127.0.0.1:1/none",
      connectTimeoutMs: 2000,
    });
    stores.push(store);
    const error = await rejection(store.load("p-1"));
    expect(error).toBeInstanceOf(StateFileError);
    expect((error as StateFileError).problem).toBe("unreadable");
    expect((error as StateFileError).file).toBe(
      "postgres://127.0.0.1:1/none pgcp_project_state[p-1]",
    );
  });

  it("commits under a lease only while it is current, by the database's clock", async () => {
    const store = storeOf();
    const lease = (holder: string | null, token: number, expiresIn: string) =>
      db.query(
        `INSERT INTO pgcp_leases (project_id, holder, fencing_token, expires_at)
         VALUES ('p-f', $1, $2, now() + $3::interval)
         ON CONFLICT (project_id) DO UPDATE
           SET holder = excluded.holder, fencing_token = excluded.fencing_token,
               expires_at = excluded.expires_at`,
        [holder, token, expiresIn],
      );
    const reasonOf = async (promise: Promise<unknown>) => {
      const error = await rejection(promise);
      expect(error).toBeInstanceOf(LeaseLostError);
      return (error as LeaseLostError).reason;
    };

    expect(await reasonOf(store.commitFenced(state("p-f", 1), undefined, fence("r1", 3)))).toBe(
      "missing",
    );
    await lease("r1", 3, "10 seconds");
    await store.commitFenced(state("p-f", 1), undefined, fence("r1", 3));
    expect(await reasonOf(store.commitFenced(state("p-f", 2), undefined, fence("r1", 2)))).toBe(
      "taken",
    );
    expect(await reasonOf(store.commitFenced(state("p-f", 2), undefined, fence("r2", 3)))).toBe(
      "taken",
    );
    await lease("r1", 3, "-1 second");
    expect(await reasonOf(store.commitFenced(state("p-f", 2), undefined, fence("r1", 3)))).toBe(
      "expired",
    );
    await lease(null, 3, "0 seconds");
    expect(await reasonOf(store.commitFenced(state("p-f", 2), undefined, fence("r1", 3)))).toBe(
      "released",
    );
    // Claimed by r2 (token 4): r1's late commit is rejected, r2's goes through.
    await lease("r2", 4, "10 seconds");
    expect(await reasonOf(store.commitFenced(state("p-f", 2), undefined, fence("r1", 3)))).toBe(
      "taken",
    );
    await store.commitFenced(state("p-f", 2, 42), undefined, fence("r2", 4));
    const rows = await db.query(
      "SELECT sequence::int, fencing_token::int, committed_by FROM pgcp_project_state WHERE project_id = 'p-f'",
    );
    expect(rows).toEqual([{ sequence: 2, fencing_token: 4, committed_by: "r2" }]);
    expect((await store.load("p-f"))?.watermark.second).toBe(42);
  });

  it("archives end-state operations in the commit's transaction, once each, idempotently", async () => {
    const store = storeOf({ archive: true });
    await db.query(
      "INSERT INTO pgcp_leases (project_id, holder, fencing_token, expires_at) VALUES ('p-a', 'r1', 1, now() + interval '1 minute')",
    );
    const archive = () =>
      db.query<{
        operation_id: string;
        status: string;
        failures_count: number;
        error: string | null;
        total_duration_ms: string;
        created_at: Date;
        archived_at: Date;
      }>(
        "SELECT operation_id, status, failures_count, error, total_duration_ms::text, created_at, archived_at FROM pgcp_operations WHERE project_id = 'p-a' ORDER BY operation_id",
      );

    const first = [
      ended("p-a", "op-1", "finished"),
      // Seen failed, then (in the same poll) retried: the record is no longer in an end status.
      ended("p-a", "op-2", "running", { failuresCount: 1 }),
      ended("p-a", "op-3", "failed", { failuresCount: 1, error: "disk full" }),
      // One operation twice in a commit (a failure inferred, then the one seen): one row.
      ended("p-a", "op-4", "failed", { failuresCount: 1, updatedAtMs: 1_700_000_001_000 }),
      ended("p-a", "op-4", "failed", { failuresCount: 2, updatedAtMs: 1_700_000_002_000 }),
    ];
    await store.commitFenced(state("p-a", 1), { ended: first }, fence("r1", 1));
    let rows = await archive();
    expect(rows.map((r) => [r.operation_id, r.status, r.failures_count])).toEqual([
      ["op-1", "finished", 0],
      ["op-3", "failed", 1],
      ["op-4", "failed", 2],
    ]);
    expect(rows[0]?.created_at.getTime()).toBe(1_700_000_000_000);
    expect(rows[0]?.total_duration_ms).toBe("4000");
    expect(rows[1]?.error).toBe("disk full");
    const archivedAt = new Map(rows.map((r) => [r.operation_id, r.archived_at.getTime()]));

    // A fenced commit writes no row; a failed one (here: an invalid record) neither, nor state.
    const later = [ended("p-a", "op-9", "finished")];
    expect(
      await rejection(store.commitFenced(state("p-a", 2), { ended: later }, fence("r1", 0))),
    ).toBeInstanceOf(LeaseLostError);
    const invalid = [
      ended("p-a", "op-9", "finished"),
      ended("p-a", "op-8", "error", { createdAtMs: NaN }),
    ];
    expect(
      await rejection(store.commitFenced(state("p-a", 2), { ended: invalid }, fence("r1", 1))),
    ).toBeDefined();
    expect((await archive()).map((r) => r.operation_id)).toEqual(["op-1", "op-3", "op-4"]);
    expect((await store.load("p-a"))?.sequence).toBe(1);

    // The same records again (a repeated poll): nothing changes, not even archived_at. A later
    // end status replaces a row; an older read of a record never does.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = [
      ...first,
      ended("p-a", "op-3", "finished", { failuresCount: 1, updatedAtMs: 1_700_000_009_000 }),
      ended("p-a", "op-1", "failed", { updatedAtMs: 1_699_999_999_000 }),
    ];
    await store.commitFenced(state("p-a", 2), { ended: second }, fence("r1", 1));
    rows = await archive();
    expect(rows.map((r) => [r.operation_id, r.status, r.failures_count])).toEqual([
      ["op-1", "finished", 0],
      ["op-3", "finished", 1],
      ["op-4", "failed", 2],
    ]);
    expect(rows.find((r) => r.operation_id === "op-1")?.archived_at.getTime()).toBe(
      archivedAt.get("op-1"),
    );
    expect(rows.find((r) => r.operation_id === "op-4")?.archived_at.getTime()).toBe(
      archivedAt.get("op-4"),
    );
    expect(rows.find((r) => r.operation_id === "op-3")?.archived_at.getTime()).toBeGreaterThan(
      archivedAt.get("op-3") ?? Infinity,
    );

    // Without history: postgres, nothing is archived.
    const plain = storeOf();
    await plain.commitFenced(
      state("p-a", 3),
      { ended: [ended("p-a", "op-7", "finished")] },
      fence("r1", 1),
    );
    expect((await archive()).map((r) => r.operation_id)).not.toContain("op-7");
  });

  it("keeps its tables in the schema it is given, creating it, and leaves the others alone", async () => {
    const store = storeOf({ schema: "pgcp_own" });
    await store.open();
    await store.commit(state("p-s", 1));
    expect(await store.load("p-s")).toEqual(state("p-s", 1));
    const tables = await db.query<{ table_schema: string }>(
      `SELECT DISTINCT table_schema FROM information_schema.tables
        WHERE table_name = 'pgcp_project_state' ORDER BY table_schema`,
    );
    // The other tests' store is in public; this one's row is in its own schema alone.
    expect(tables.map((t) => t.table_schema)).toEqual(["pgcp_own", "public"]);
    const own = await db.query("SELECT project_id FROM pgcp_own.pgcp_project_state");
    expect(own).toEqual([{ project_id: "p-s" }]);
    expect(await storeOf().load("p-s")).toBeUndefined();
    // A second store on the same schema finds it migrated and reads the row.
    expect(await storeOf({ schema: "pgcp_own" }).load("p-s")).toEqual(state("p-s", 1));
  });
});

describePg.runIf(PG_ROUTES.includes("pgbouncer"))(
  "the Postgres state store, through a pooler that closes idle connections",
  () => {
    it("commits and loads after its connections were closed while idle", async () => {
      const db = await createTestDatabase("pgcp_idle");
      const bouncer = await startPgBouncer({
        serverUrl: PG_ADMIN_URL ?? "",
        clientIdleTimeoutS: 1,
      });
      const store = new PostgresStateStore({ url: bouncer.urlOf(db.url) });
      try {
        await store.commit(state("p-idle", 1));
        // Idle past the pooler's timeout: every connection of the store's pools is closed. The
        // first time the event loop runs meanwhile and hears the closes; the second time it is
        // busy (a long collection, a starved container), so the commit finds its connection
        // closed only when it uses it.
        await new Promise((resolve) => setTimeout(resolve, 1600));
        await store.commit(state("p-idle", 2));
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1600);
        await store.commit(state("p-idle", 3));
        expect((await store.load("p-idle"))?.sequence).toBe(3);
      } finally {
        await store.close();
        await bouncer.stop();
        await db.drop();
      }
    });
  },
);

function fence(holder: string, token: number) {
  return { holder, token };
}
