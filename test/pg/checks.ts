/**
 * What a Postgres store's database holds, checked against the simulator's truth: the committed
 * states, the operations archive, and a log of every commit and every claim (triggers) by which
 * each commit can be checked against the lease it was made under. Shared by the replica test
 * (`replicas.test.ts`) and the replica soak (`test/soak/replicas.ts`), so free of vitest.
 */
import type pg from "pg";
import { isEndStatus } from "../../src/contract/index.js";
import type { ProjectState } from "../../src/store/index.js";
import { parseStateRow } from "../../src/store/postgres-store.js";
import type { TestSimulator } from "../support/simulator.js";

/** Where the checks read: a test's database, or the soak's. */
export interface Database {
  query<R extends pg.QueryResultRow = Record<string, unknown>>(
    sql: string,
    params?: unknown[],
  ): Promise<R[]>;
}

/** Every project's committed state, validated. */
export async function readStates(db: Database): Promise<Map<string, ProjectState>> {
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
  db: Database,
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

// --- the commit log -------------------------------------------------------------------------

/**
 * Logs every committed state write (`test_commits`) and every claim of a lease
 * (`test_claims`, a new fencing token), with the database's time: triggers, so only what a
 * transaction commits is logged. Run on a migrated database.
 */
export async function installCommitLog(db: Database): Promise<void> {
  await db.query(`
    CREATE TABLE test_commits (
      n bigserial PRIMARY KEY, project_id text, sequence bigint, fencing_token bigint,
      committed_by text, at timestamptz DEFAULT clock_timestamp());
    CREATE FUNCTION test_log_commit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO test_commits (project_id, sequence, fencing_token, committed_by)
      VALUES (NEW.project_id, NEW.sequence, NEW.fencing_token, NEW.committed_by);
      RETURN NEW;
    END $$;
    CREATE TRIGGER test_log_commit AFTER INSERT OR UPDATE ON pgcp_project_state
      FOR EACH ROW EXECUTE FUNCTION test_log_commit();
    CREATE TABLE test_claims (
      n bigserial PRIMARY KEY, project_id text, holder text, fencing_token bigint,
      at timestamptz DEFAULT clock_timestamp());
    CREATE FUNCTION test_log_claim() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO test_claims (project_id, holder, fencing_token)
      VALUES (NEW.project_id, NEW.holder, NEW.fencing_token);
      RETURN NEW;
    END $$;
    CREATE TRIGGER test_log_claim AFTER UPDATE ON pgcp_leases
      FOR EACH ROW WHEN (NEW.fencing_token <> OLD.fencing_token)
      EXECUTE FUNCTION test_log_claim();
  `);
}

export interface LoggedCommit {
  readonly project_id: string;
  readonly sequence: number;
  readonly token: number;
  readonly committed_by: string;
  /** The database's `clock_timestamp()` when the commit's row was written. */
  readonly at: Date;
}

export interface LoggedClaim {
  readonly project_id: string;
  readonly holder: string;
  readonly token: number;
  readonly at: Date;
}

export interface CommitLog {
  readonly commits: readonly LoggedCommit[];
  readonly claims: readonly LoggedClaim[];
}

/** The commits and claims logged so far, in order. */
export async function readCommitLog(db: Database): Promise<CommitLog> {
  const commits = await db.query<LoggedCommit>(
    "SELECT project_id, sequence::int, fencing_token::int AS token, committed_by, at FROM test_commits ORDER BY n",
  );
  const claims = await db.query<LoggedClaim>(
    "SELECT project_id, holder, fencing_token::int AS token, at FROM test_claims ORDER BY n",
  );
  return { commits, claims };
}

/**
 * Every commit of a project made under the newest claim of its project, by the replica that
 * claimed it; the commits of a project form one unbroken sequence (none lost, none made twice).
 * Returns the problems.
 */
export function commitLogProblems(projectIds: readonly string[], log: CommitLog): string[] {
  const claimer = new Map(log.claims.map((c) => [`${c.project_id}/${String(c.token)}`, c.holder]));
  const problems: string[] = [];
  for (const project of projectIds) {
    const mine = log.commits.filter((c) => c.project_id === project);
    const sequences = mine.map((c) => c.sequence);
    if (!sequences.every((s, i) => s === i + 1)) {
      problems.push(`${project}: commit sequences ${sequences.join(",")} are not 1..n in order`);
    }
    for (const [i, c] of mine.entries()) {
      const by = claimer.get(`${project}/${String(c.token)}`);
      if (by !== c.committed_by) {
        problems.push(
          `${project}#${c.sequence}: committed by ${c.committed_by} under token ${c.token} claimed by ${String(by)}`,
        );
      }
      const before = mine[i - 1];
      if (before !== undefined && c.token < before.token) {
        problems.push(`${project}#${c.sequence}: token ${c.token} after token ${before.token}`);
      }
    }
  }
  return problems;
}
