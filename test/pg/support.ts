/**
 * Helpers of the Postgres tests: the suite's server (from the global setup), a fresh database
 * per test file, and small query helpers.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { describe, inject } from "vitest";
import { isEndStatus } from "../../src/contract/index.js";
import type { ProjectState } from "../../src/store/index.js";
import { parseStateRow } from "../../src/store/postgres-store.js";
import type { TestSimulator } from "../support/simulator.js";
import type { Arrivals } from "../sync/support.js";

export const PG_ADMIN_URL = inject("pgAdminUrl");
export const PG_SKIP_REASON = inject("pgSkipReason");

/** `describe`, skipped (with the global setup's reason) when there is no server. */
export const describePg: typeof describe =
  PG_ADMIN_URL === undefined ? (describe.skip as typeof describe) : describe;

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
  const name = `${prefix}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
  pool.on("error", () => undefined);
  return {
    url: url.toString(),
    name,
    pool,
    query: async <R extends pg.QueryResultRow>(sql: string, params?: unknown[]) =>
      (await pool.query<R>(sql, params)).rows,
    drop: async () => {
      await pool.end();
      const client = new pg.Client({ connectionString: PG_ADMIN_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

export const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms);
  });

/**
 * Calls `probe` until it returns something other than undefined/false, and returns that. The
 * timeout is a safety net, never the thing tested.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 20_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what} (last: ${String(last)})`,
      );
    }
    await sleep(intervalMs);
  }
}

// --- the CLI as a child process --------------------------------------------------------------

export const CLI = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));

export interface CliProcess {
  readonly child: ChildProcess;
  /** Everything it wrote, stdout and stderr, as received. */
  readonly output: string[];
  /** Its JSON log lines. */
  readonly logs: Record<string, unknown>[];
  /** Resolves with the "exporter started" line (never, if it dies first). */
  readonly started: Promise<Record<string, unknown>>;
  /** Resolves with the address of its HTTP server. */
  readonly url: Promise<string>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  text(): string;
}

/** `node dist/cli.js run --config FILE`, with only `env`'s PGCP_* variables. */
export function spawnCli(configFile: string, env: Record<string, string>): CliProcess {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("PGCP_")),
  );
  const child = spawn(process.execPath, [CLI, "run", "--config", configFile], {
    env: { ...base, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const logs: Record<string, unknown>[] = [];
  let markStarted: (line: Record<string, unknown>) => void = () => undefined;
  let markUrl: (url: string) => void = () => undefined;
  const started = new Promise<Record<string, unknown>>((resolve) => {
    markStarted = resolve;
  });
  const url = new Promise<string>((resolve) => {
    markUrl = resolve;
  });
  let partial = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    output.push(chunk);
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        if (entry.msg === "exporter started") markStarted(entry);
        if (typeof entry.url === "string" && String(entry.msg).startsWith("serving")) {
          markUrl(entry.url);
        }
      } catch {
        // Not a log line: kept in `output` only.
      }
    }
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    output.push(chunk);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => {
      resolve({ code, signal });
    });
  });
  return { child, output, logs, started, url, exited, text: () => output.join("") };
}

/** mulberry32: a small seeded generator, so that a failing run's choices can be replayed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
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

/** `project key: committed N, truth M` for every count that differs. */
export function diffArrivals(project: string, committed: Arrivals, truth: Arrivals): string[] {
  const keys = [...new Set([...Object.keys(committed), ...Object.keys(truth)])].sort();
  return keys
    .filter((k) => (committed[k] ?? 0) !== (truth[k] ?? 0))
    .map((k) => `${project} ${k}: committed ${committed[k] ?? 0}, truth ${truth[k] ?? 0}`);
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
