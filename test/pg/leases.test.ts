/**
 * Project leases between lease managers in one process, each with its own connection pool, on
 * a real server, directly and through a real PgBouncer in transaction pooling mode: an even and exclusive split, rebalancing as replicas join and leave (with
 * the drain before every handover), and a replica cut off from the database, which must stop
 * trusting its leases (and so stop delivering alerts) before any other replica can claim them.
 */
import pg from "pg";
import { transactionalQueries } from "../../src/store/postgres-transaction.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { LeaseManager, fairShare, type LeaseObserver } from "../../src/leases/index.js";
import { createLogger } from "../../src/logger.js";
import { sleep, waitFor } from "../support/wait.js";
import {
  createMigratedDatabase,
  describePg,
  PG_ROUTES,
  routed,
  type TestDatabase,
} from "./support.js";

const LEASE_MS = 1500;
const PROJECTS = Array.from({ length: 10 }, (_, i) => `p-${String(i).padStart(2, "0")}`);

interface Replica {
  readonly id: string;
  readonly manager: LeaseManager;
  readonly pool: pg.Pool;
  readonly events: { kind: string; project: string; token?: number; reason?: string; at: number }[];
  /** Projects drained, each with whether the database still named this replica then. */
  readonly drains: { project: string; stillHeld: boolean }[];
}

describePg.each(PG_ROUTES)("project leases (%s)", (route) => {
  let db: TestDatabase;
  const replicas: Replica[] = [];
  const logger = createLogger("silent");

  beforeAll(async () => {
    db = await createMigratedDatabase("pgcp_leases");
  });

  afterAll(async () => {
    for (const r of replicas) {
      await r.manager.stop();
      await r.pool.end().catch(() => undefined);
    }
    await db.drop();
  });

  const startReplica = async (id: string, candidates = PROJECTS): Promise<Replica> => {
    const pool = new pg.Pool({ connectionString: routed(db.url, route), max: 2 });
    pool.on("error", () => undefined);
    const events: Replica["events"] = [];
    const drains: Replica["drains"] = [];
    const observer: LeaseObserver = {
      acquired: (project, token) =>
        events.push({ kind: "acquired", project, token, at: Date.now() }),
      released: (project, reason) =>
        events.push({ kind: "released", project, reason, at: Date.now() }),
      lost: (project, reason) => events.push({ kind: "lost", project, reason, at: Date.now() }),
    };
    const manager = new LeaseManager({
      db: transactionalQueries(pool, { statementTimeoutMs: 5000, idleInTransactionTimeoutMs: 500 }),
      replicaId: id,
      leaseMs: LEASE_MS,
      logger,
      observer,
    });
    manager.setCandidates(candidates);
    const replica: Replica = { id, manager, pool, events, drains };
    replicas.push(replica);
    await manager.start({
      onChange: () => undefined,
      drain: async (project) => {
        const rows = await db.query<{ holder: string | null }>(
          "SELECT holder FROM pgcp_leases WHERE project_id = $1",
          [project],
        );
        drains.push({ project, stillHeld: rows[0]?.holder === id });
      },
    });
    return replica;
  };

  const dbHolders = async () => {
    const rows = await db.query<{ project_id: string; holder: string | null; live: boolean }>(
      "SELECT project_id, holder, expires_at > now() AS live FROM pgcp_leases ORDER BY project_id",
    );
    return new Map(rows.map((r) => [r.project_id, r.live ? r.holder : null]));
  };

  /** Every project held by exactly one of `live`, in its share; the local views agree. */
  const settled = async (live: readonly Replica[]) => {
    const holders = await dbHolders();
    const ids = live.map((r) => r.id).sort();
    for (const project of PROJECTS) {
      const holder = holders.get(project);
      if (holder === null || holder === undefined || !ids.includes(holder)) return false;
    }
    for (const r of live) {
      const held = r.manager.heldProjects();
      if (held.length !== fairShare(PROJECTS.length, ids, r.id)) return false;
      if (!held.every((p) => holders.get(p) === r.id)) return false;
    }
    return true;
  };

  /** No project is held (locally) by two replicas at once. */
  const exclusive = (live: readonly Replica[]): string[] => {
    const seen = new Map<string, string>();
    const doubles: string[] = [];
    for (const r of live) {
      for (const p of r.manager.heldProjects()) {
        const other = seen.get(p);
        if (other !== undefined) doubles.push(`${p} held by ${other} and ${r.id}`);
        seen.set(p, r.id);
      }
    }
    return doubles;
  };

  /** Waits for `settled`, checking exclusivity all along. */
  const settle = async (live: readonly Replica[], what: string) => {
    const doubles: string[] = [];
    await waitFor(
      what,
      async () => {
        doubles.push(...exclusive(live));
        return settled(live);
      },
      15_000,
      10,
    );
    expect(doubles).toEqual([]);
  };

  it("splits the projects evenly and exclusively, and rebalances as replicas join and leave", async () => {
    const a = await startReplica("r-a");
    await settle([a], "one replica to hold every project");
    expect(a.manager.heldProjects()).toEqual(PROJECTS);

    const b = await startReplica("r-b");
    await settle([a, b], "a 5/5 split");
    const c = await startReplica("r-c");
    await settle([a, b, c], "a 4/3/3 split");
    expect([a, b, c].map((r) => r.manager.heldProjects().length)).toEqual([4, 3, 3]);
    expect([a, b, c].map((r) => r.manager.liveReplicas)).toEqual([3, 3, 3]);
    expect([a, b, c].map((r) => r.manager.targetProjects)).toEqual([4, 3, 3]);

    // Every handover waited for the project's work in flight while the lease was still held.
    const drains = replicas.flatMap((r) => r.drains);
    expect(drains.length).toBeGreaterThanOrEqual(6);
    expect(drains.filter((d) => !d.stillHeld)).toEqual([]);

    // A replica that stops releases its leases: the others take them at their next heartbeat.
    const stoppedAt = Date.now();
    await c.manager.stop();
    replicas.splice(replicas.indexOf(c), 1);
    await settle([a, b], "a 5/5 split after a replica stopped");
    expect(Date.now() - stoppedAt).toBeLessThan(LEASE_MS);

    // Each claim increased the project's fencing token: tokens never repeat or go back.
    const claims = [a, b, c]
      .flatMap((r) => r.events.filter((e) => e.kind === "acquired"))
      .sort((x, y) => (x.token ?? 0) - (y.token ?? 0));
    for (const project of PROJECTS) {
      const tokens = claims.filter((e) => e.project === project).map((e) => e.token ?? 0);
      expect(new Set(tokens).size, project).toBe(tokens.length);
    }
    const rows = await db.query<{ project_id: string; token: number }>(
      "SELECT project_id, fencing_token::int AS token FROM pgcp_leases",
    );
    for (const row of rows) {
      const mine = claims.filter((e) => e.project === row.project_id).map((e) => e.token ?? 0);
      expect(row.token).toBe(Math.max(...mine));
    }
  });

  it("a replica cut off from the database stops trusting its leases before anyone can claim them", async () => {
    const [a, b] = replicas;
    if (a === undefined || b === undefined) throw new Error("the first test did not run");
    const cutOff = a.manager.heldProjects();
    expect(cutOff.length).toBeGreaterThan(0);
    // Until when A still considers each of its leases valid: sampled all along.
    const validUntil = new Map<string, number>();
    const sampling = { stop: false };
    const sampler = (async () => {
      while (!sampling.stop) {
        for (const p of cutOff) if (a.manager.isValid(p)) validUntil.set(p, Date.now());
        await sleep(5);
      }
    })();
    const cutAt = Date.now();
    await a.pool.end();
    await waitFor(
      "B to take over A's projects",
      () => b.manager.heldProjects().length === PROJECTS.length,
      LEASE_MS * 4,
      10,
    );
    const tookMs = Date.now() - cutAt;
    sampling.stop = true;
    await sampler;
    for (const p of cutOff) {
      const claimed = b.events.find(
        (e) => e.kind === "acquired" && e.project === p && e.at >= cutAt,
      );
      expect(claimed, p).toBeDefined();
      expect(validUntil.get(p) ?? 0, p).toBeLessThan(claimed?.at ?? 0);
    }
    // Within the lease plus a heartbeat or two.
    expect(tookMs).toBeLessThan(LEASE_MS + (3 * LEASE_MS) / 3 + 500);
    expect(a.manager.heldProjects()).toEqual([]);
    expect(a.events.filter((e) => e.kind === "lost").map((e) => e.reason)).toEqual(
      cutOff.map(() => "expired"),
    );
  });
});
