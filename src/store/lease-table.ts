/**
 * The statements of project leases, over the tables of `migrations.ts`: `pgcp_leases` (one row
 * a project: its holder, fencing token and expiry) and `pgcp_replicas` (one row a replica: its
 * latest heartbeat). Each function runs one statement and returns plain data; what to renew,
 * release or claim is decided in `src/leases`.
 *
 * Every expiry and heartbeat is measured by the database's clock (`now()`), never compared
 * across machines. A renewal or release names the holder and the fencing token of its claim,
 * so it does nothing to a lease that was claimed again since.
 */
import type { Queryable } from "./postgres-transaction.js";

/** Where the statements run: the store's control connections, each a transaction of its own. */
export type LeaseDatabase = Queryable;

/** A lease as the table knows it: the project and the fencing token of its claim. */
export interface LeaseRow {
  readonly projectId: string;
  readonly token: number;
}

/** Records the replica's heartbeat (registering it the first time). */
export async function registerReplica(db: LeaseDatabase, replicaId: string): Promise<void> {
  await db.query(
    `INSERT INTO pgcp_replicas (id, started_at, heartbeat_at) VALUES ($1, now(), now())
     ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`,
    [replicaId],
  );
}

/** Removes the replica, so that the others no longer count it in the split. */
export async function unregisterReplica(db: LeaseDatabase, replicaId: string): Promise<void> {
  await db.query("DELETE FROM pgcp_replicas WHERE id = $1", [replicaId]);
}

/**
 * Extends by `leaseMs` the leases that still name `holder` with their token; returns the
 * projects renewed (a lease missing from them is no longer the holder's).
 */
export async function renewLeases(
  db: LeaseDatabase,
  holder: string,
  leases: readonly LeaseRow[],
  leaseMs: number,
): Promise<Set<string>> {
  if (leases.length === 0) return new Set();
  const { rows } = await db.query<{ project_id: string }>(
    `UPDATE pgcp_leases AS l SET expires_at = now() + make_interval(secs => $2)
       FROM unnest($3::text[], $4::bigint[]) AS h(project_id, token)
      WHERE l.project_id = h.project_id AND l.fencing_token = h.token AND l.holder = $1
      RETURNING l.project_id`,
    [holder, leaseMs / 1000, leases.map((l) => l.projectId), leases.map((l) => l.token)],
  );
  return new Set(rows.map((r) => r.project_id));
}

/** Forgets replicas gone for long (killed, never stopped): an hour, or ten leases if longer. */
export async function forgetGoneReplicas(db: LeaseDatabase, leaseMs: number): Promise<void> {
  await db.query(
    `DELETE FROM pgcp_replicas
      WHERE heartbeat_at < now() - GREATEST(interval '1 hour', make_interval(secs => $1::float8 * 10))`,
    [leaseMs / 1000],
  );
}

/** The replicas with a heartbeat within the last `leaseMs`, in no particular order. */
export async function liveReplicaIds(db: LeaseDatabase, leaseMs: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM pgcp_replicas WHERE heartbeat_at > now() - make_interval(secs => $1)`,
    [leaseMs / 1000],
  );
  return rows.map((r) => r.id);
}

/** Makes a lease row, free, for each project that has none yet. */
export async function addLeaseRows(
  db: LeaseDatabase,
  projectIds: readonly string[],
): Promise<void> {
  await db.query(
    `INSERT INTO pgcp_leases (project_id) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING`,
    [projectIds],
  );
}

/**
 * Claims for `holder`, for `leaseMs`, up to `count` of the `projectIds` whose lease is free or
 * expired, picked at random (rows another claim has locked are skipped). Each claim increases
 * the project's fencing token; returns the leases claimed.
 */
export async function claimLeases(
  db: LeaseDatabase,
  holder: string,
  projectIds: readonly string[],
  count: number,
  leaseMs: number,
): Promise<LeaseRow[]> {
  const { rows } = await db.query<{ project_id: string; token: string }>(
    `UPDATE pgcp_leases AS l
        SET holder = $1, fencing_token = l.fencing_token + 1,
            expires_at = now() + make_interval(secs => $2), acquired_at = now()
       FROM (SELECT project_id FROM pgcp_leases
              WHERE project_id = ANY($3::text[])
                AND (holder IS NULL OR expires_at <= now())
              ORDER BY random()
              LIMIT $4
              FOR UPDATE SKIP LOCKED) AS c
      WHERE l.project_id = c.project_id
      RETURNING l.project_id, l.fencing_token::text AS token`,
    [holder, leaseMs / 1000, projectIds, count],
  );
  return rows.map((r) => ({ projectId: r.project_id, token: Number(r.token) }));
}

/** Frees the leases that still name `holder` with their token (expired at once). */
export async function releaseLeases(
  db: LeaseDatabase,
  holder: string,
  leases: readonly LeaseRow[],
): Promise<void> {
  if (leases.length === 0) return;
  await db.query(
    `UPDATE pgcp_leases AS l SET holder = NULL, expires_at = now()
       FROM unnest($2::text[], $3::bigint[]) AS h(project_id, token)
      WHERE l.project_id = h.project_id AND l.fencing_token = h.token AND l.holder = $1`,
    [holder, leases.map((l) => l.projectId), leases.map((l) => l.token)],
  );
}

/**
 * How many of `projectIds` have no live holder: no lease row, no holder, or a lease expired by
 * the database's clock.
 */
export async function countUnowned(
  db: LeaseDatabase,
  projectIds: readonly string[],
): Promise<number> {
  if (projectIds.length === 0) return 0;
  const { rows } = await db.query<{ unowned: number }>(
    `SELECT count(*)::int AS unowned
       FROM unnest($1::text[]) AS w(project_id)
       LEFT JOIN pgcp_leases AS l ON l.project_id = w.project_id
      WHERE l.holder IS NULL OR l.expires_at <= now()`,
    [projectIds],
  );
  return rows[0]?.unowned ?? 0;
}
