/**
 * One probe of a compute: one connection (`application_name` `pgcp-exporter`, a short
 * connect and statement timeout, the role and TLS of its account), two statements, and the
 * connection closed again. The statements read only what the probe needs:
 *
 * 1. from `pg_stat_activity`, the client sessions other than the probe's own (and other than
 *    those of the ignored roles and application names): how many there are, how many are busy
 *    now, and the latest activity of the idle ones; with the compute's start time,
 *    `pg_postmaster_start_time()`, and the server's clock to measure both against;
 * 2. the file cache view `neon_stat_file_cache` (the `neon` extension's), by its five columns.
 *
 * Every failure becomes a reason from a bounded set (`PROBE_FAILURE_REASONS`) and a message
 * that never holds the password.
 */
import pg from "pg";
import type { ComputeConnection } from "../config/index.js";
import type { ProbeFailureReason } from "../sync/index.js";

/** The `application_name` of the probe's sessions: its own activity, never counted. */
export const PROBE_APPLICATION_NAME = "pgcp-exporter";

/** The file cache view, and its columns as the probe reads them. */
export const FILE_CACHE_VIEW = "neon_stat_file_cache";
export const FILE_CACHE_COLUMNS = [
  "file_cache_misses",
  "file_cache_hits",
  "file_cache_used",
  "file_cache_writes",
  "file_cache_hit_ratio",
] as const;

export interface ProbeTarget {
  /** The endpoint's `host`, from the listing. */
  readonly host: string;
  readonly connection: ComputeConnection;
}

export interface ProbeOptions {
  /** How long connecting, and each statement, may take. */
  readonly timeoutMs: number;
  /** Roles whose sessions are not counted (the service's own). */
  readonly ignoreUsers: readonly string[];
  /** Application names whose sessions are not counted; a trailing `*` matches any end. */
  readonly ignoreApplications: readonly string[];
}

/** What the sessions' statement read, on the server's clock (seconds since the epoch). */
export interface SessionsReading {
  /** The server's clock when it answered the sessions' statement. */
  readonly serverNowS: number;
  /** How long the compute has run (s); undefined when the server does not say. */
  readonly uptimeS: number | undefined;
  /** Counted client sessions. */
  readonly connections: number;
  /** Counted client sessions that are busy now (running, or inside a transaction). */
  readonly busy: number;
  /** The latest activity of the counted idle sessions (server clock, s), if any. */
  readonly lastIdleChangeS: number | undefined;
}

/** What one probe read: the sessions, and the file cache view. */
export interface RawReading extends SessionsReading {
  readonly misses: number;
  readonly hits: number;
  readonly used: number;
  readonly writes: number;
  /** Percent; undefined when the view has none yet. */
  readonly hitRatio: number | undefined;
}

export type ProbeResult = { readonly ok: true; readonly reading: RawReading } | ProbeFailed;

/** A failed probe: why, and what it did on the compute before it failed. */
export interface ProbeFailed {
  readonly ok: false;
  readonly reason: ProbeFailureReason;
  /** Without the password. */
  readonly message: string;
  /** A session was set up: the attempt was activity on the compute. */
  readonly session: boolean;
  /** What the sessions' statement read, when it answered before the failure. */
  readonly sessions?: SessionsReading;
}

/**
 * The sessions' statement. `$1`: the probe's application name; `$2`: ignored roles; `$3`:
 * ignored application names; `$4`: ignored application name prefixes. Sessions of other roles
 * show no `backend_type` to a role without `pg_read_all_stats`: a session with a database and
 * a role is a client's then. Unqualified names, as a client's session resolves them.
 */
const SESSIONS_SQL = `
SELECT extract(epoch FROM clock_timestamp())::float8 AS server_now,
       extract(epoch FROM clock_timestamp() - pg_postmaster_start_time())::float8 AS uptime,
       count(*) FILTER (WHERE counted)::int AS connections,
       count(*) FILTER (WHERE counted AND state NOT IN ('idle', 'disabled'))::int AS busy,
       extract(epoch FROM max(state_change) FILTER (WHERE counted AND state = 'idle'))::float8
         AS last_idle_change
  FROM (SELECT a.state, a.state_change,
               (a.backend_type = 'client backend'
                 OR (a.backend_type IS NULL AND a.datid IS NOT NULL AND a.usesysid IS NOT NULL))
               AND a.application_name IS DISTINCT FROM $1
               AND NOT coalesce(a.usename = ANY ($2::text[]), false)
               AND NOT coalesce(a.application_name = ANY ($3::text[]), false)
               AND NOT EXISTS (SELECT 1 FROM unnest($4::text[]) AS p(prefix)
                                WHERE starts_with(coalesce(a.application_name, ''), p.prefix))
                 AS counted
          FROM pg_stat_activity a
         WHERE a.pid <> pg_backend_pid()) AS sessions`;

const VIEW_SQL = `SELECT ${FILE_CACHE_COLUMNS.join(", ")} FROM ${FILE_CACHE_VIEW}`;

/**
 * Reads a compute once; never throws. `signal` ends the probe at once (its connection
 * destroyed): a stopping exporter does not wait for a compute that does not answer.
 */
export async function probeCompute(
  target: ProbeTarget,
  options: ProbeOptions,
  signal?: AbortSignal,
): Promise<ProbeResult> {
  const { connection: c } = target;
  const client = new pg.Client({
    host: target.host,
    port: c.port,
    user: c.user,
    password: c.password,
    database: c.database,
    ssl: sslOptions(c),
    application_name: PROBE_APPLICATION_NAME,
    connectionTimeoutMillis: options.timeoutMs,
    statement_timeout: options.timeoutMs,
    // Also when the server never answers (statement_timeout is the server's to keep).
    query_timeout: options.timeoutMs + 1000,
    keepAlive: false,
  });
  // A connection lost after the probe's last statement must not become an uncaught error.
  client.on("error", () => undefined);
  const abort = () => {
    destroy(client);
  };
  signal?.addEventListener("abort", abort, { once: true });
  let stage: Stage = "connect";
  let sessions: SessionsReading | undefined;
  try {
    if (signal?.aborted === true) throw new Error("the exporter is stopping");
    await client.connect();
    stage = "sessions";
    const exact = options.ignoreApplications.filter((a) => !a.endsWith("*"));
    const prefixes = options.ignoreApplications
      .filter((a) => a.endsWith("*"))
      .map((a) => a.slice(0, -1));
    const answer = await client.query(SESSIONS_SQL, [
      PROBE_APPLICATION_NAME,
      options.ignoreUsers,
      exact,
      prefixes,
    ]);
    const parsed = parseSessions(answer.rows);
    if (typeof parsed === "string") return unexpected(parsed, undefined);
    sessions = parsed;
    stage = "view";
    const view = parseView((await client.query(VIEW_SQL)).rows);
    if (typeof view === "string") return unexpected(view, sessions);
    return { ok: true, reading: { ...sessions, ...view } };
  } catch (error) {
    return {
      ...failure(error, stage, c.password),
      ...(sessions === undefined ? {} : { sessions }),
    };
  } finally {
    signal?.removeEventListener("abort", abort);
    await close(client);
  }
}

type Stage = "connect" | "sessions" | "view";

function unexpected(message: string, sessions: SessionsReading | undefined): ProbeFailed {
  return {
    ok: false,
    reason: "unexpected_answer",
    message,
    session: true,
    ...(sessions === undefined ? {} : { sessions }),
  };
}

function sslOptions(c: ComputeConnection): pg.ClientConfig["ssl"] {
  switch (c.sslmode) {
    case "disable":
      return false;
    case "require":
      return { rejectUnauthorized: false };
    case "verify-full":
      return { rejectUnauthorized: true, ...(c.ca === undefined ? {} : { ca: c.ca }) };
  }
}

/**
 * Ends the session; a server that does not answer gets its socket destroyed after a moment
 * (pg's `end` waits for the server to close it).
 */
async function close(client: pg.Client): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const ended = client.end().then(
    () => true,
    () => true,
  );
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => {
      resolve(false);
    }, 1000);
  });
  const done = await Promise.race([ended, late]);
  clearTimeout(timer);
  if (!done) destroy(client);
}

/** Destroys the client's socket (pg has no call for it: its connection's stream). */
function destroy(client: pg.Client): void {
  const internals = client as unknown as {
    connection?: { stream?: { destroy?: () => void } };
  };
  internals.connection?.stream?.destroy?.();
}

/** The sessions' answer, or what is wrong with it. */
export function parseSessions(rows: readonly Record<string, unknown>[]): SessionsReading | string {
  const s = rows[0];
  if (rows.length !== 1 || s === undefined) {
    return `pg_stat_activity gave ${rows.length} summary rows, not 1`;
  }
  const serverNowS = finite(s.server_now);
  const connections = count(s.connections);
  const busy = count(s.busy);
  if (serverNowS === undefined || connections === undefined || busy === undefined) {
    return "pg_stat_activity's summary is not a set of counts";
  }
  const uptime = finite(s.uptime);
  return {
    serverNowS,
    uptimeS: uptime === undefined ? undefined : Math.max(0, uptime),
    connections,
    busy,
    lastIdleChangeS: finite(s.last_idle_change),
  };
}

/** The file cache view's answer, or what is wrong with it. */
export function parseView(
  rows: readonly Record<string, unknown>[],
): Omit<RawReading, keyof SessionsReading> | string {
  if (rows.length !== 1) return `${FILE_CACHE_VIEW} has ${rows.length} rows, not 1`;
  const v = rows[0] ?? {};
  const counts: Record<string, number> = {};
  for (const column of FILE_CACHE_COLUMNS.slice(0, 4)) {
    const n = count(v[column]);
    if (n === undefined)
      return `${FILE_CACHE_VIEW}.${column} is not a count: ${describe(v[column])}`;
    counts[column] = n;
  }
  const ratio = v.file_cache_hit_ratio;
  const none = ratio === null || ratio === "NaN";
  const hitRatio = none ? undefined : finite(ratio);
  if (hitRatio === undefined && !none) {
    return `${FILE_CACHE_VIEW}.file_cache_hit_ratio is not a number: ${describe(ratio)}`;
  }
  if (hitRatio !== undefined && (hitRatio < 0 || hitRatio > 100)) {
    return `${FILE_CACHE_VIEW}.file_cache_hit_ratio is not a percentage: ${hitRatio}`;
  }
  return {
    misses: counts.file_cache_misses ?? 0,
    hits: counts.file_cache_hits ?? 0,
    used: counts.file_cache_used ?? 0,
    writes: counts.file_cache_writes ?? 0,
    hitRatio,
  };
}

/** A number, or a numeric string (bigint and numeric come as text). */
function finite(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (typeof value === "string" && /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(value)) {
    const n = Number(value);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

function count(value: unknown): number | undefined {
  const n = finite(value);
  return n !== undefined && Number.isInteger(n) && n >= 0 ? n : undefined;
}

function describe(value: unknown): string {
  const text = typeof value === "string" ? JSON.stringify(value) : String(value);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

/** SQLSTATEs and what they mean for the probe, by stage where it matters. */
const SQLSTATE_REASONS: Readonly<Record<string, ProbeFailureReason>> = {
  "28P01": "auth",
  "28000": "auth",
  "3D000": "no_database",
  "42501": "permission",
  "57014": "timeout",
  "53300": "unavailable",
  "53400": "unavailable",
  "57P01": "unavailable",
  "57P02": "unavailable",
  "57P03": "unavailable",
};

/** Node's network error codes that mean the compute could not be reached. */
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EPIPE",
  "EADDRNOTAVAIL",
]);

/** The reason and message of a failed probe; the password never stays in the message. */
export function failure(error: unknown, stage: Stage, password: string): ProbeFailed {
  const message = redact(error instanceof Error ? error.message : String(error), password);
  return {
    ok: false,
    reason: reasonOf(error, stage),
    message: words(message, stage),
    session: stage !== "connect",
  };
}

function reasonOf(error: unknown, stage: Stage): ProbeFailureReason {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : "";
  if (typeof code === "string") {
    if (stage === "view" && code === "42P01") return "no_extension";
    if (stage === "view" && code === "42703") return "view_columns";
    const known = SQLSTATE_REASONS[code];
    if (known !== undefined) return known;
    if (UNREACHABLE_CODES.has(code)) return "unreachable";
    if (/^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_OSSL)/.test(code)) {
      return "tls";
    }
    if (code.startsWith("08")) return "unreachable";
  }
  if (/does not support SSL|SSL|TLS|certificate/i.test(message)) return "tls";
  if (/Query read timeout/.test(message)) return "timeout";
  if (/timeout expired|connection timeout|Connection terminated/i.test(message)) {
    return stage === "connect" ? "unreachable" : "timeout";
  }
  return "other";
}

/** The message, saying where it happened when the driver's words do not. */
function words(message: string, stage: Stage): string {
  const text = message.replace(/\s+/g, " ").trim() || "failed";
  switch (stage) {
    case "connect":
      return `connecting: ${text}`;
    case "sessions":
      return `reading pg_stat_activity: ${text}`;
    case "view":
      return `reading ${FILE_CACHE_VIEW}: ${text}`;
  }
}

function redact(text: string, secret: string): string {
  return secret === "" ? text : text.split(secret).join("[redacted]");
}
