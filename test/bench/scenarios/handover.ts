/**
 * Scenario 7 (handover after a SIGKILL): three replicas of the real daemon (`node dist/cli.js
 * run`) share the projects of a simulator through one PostgreSQL (`PGCP_TEST_POSTGRES_URL`, or
 * a throwaway server), with a short lease. Once every project has been committed under the
 * even split, one replica is killed with SIGKILL; for each project it held, the time from the
 * kill to the claim of its lease by another replica and to that replica's first commit of the
 * project (its first poll: every poll commits) is taken on the monotonic clock, and given
 * against the lease. A fresh replica then takes the killed one's place, and the next round
 * kills another, `runs` rounds in all. The replicas' `pgcp_projects_unowned` is read all along.
 */
import path from "node:path";
import { QUICK_POLL } from "../../support/daemon-config.js";
import { DaemonGroup } from "../../support/daemon-process.js";
import { startThrowawayCluster } from "../../support/postgres-cluster.js";
import { createDatabase } from "../../support/postgres-server.js";
import {
  heldBy,
  launchReplica,
  liveHolders,
  writeReplicaConfig,
  type Replica,
} from "../../support/replica-fleet.js";
import { waitFor } from "../../support/wait.js";
import { findSample, parseExposition } from "../../support/exposition.js";
import {
  API_KEY,
  newScratch,
  removeScratch,
  startSimWorker,
  type BenchContext,
} from "../lib/context.js";
import { percentiles, type Percentiles } from "../lib/stats.js";

export interface HandoverRun {
  readonly replicas: number;
  readonly projects: number;
  readonly leaseSeconds: number;
  readonly heartbeatSeconds: number;
  readonly pollIntervalSeconds: number;
  /** Replicas killed, one per round. */
  readonly kills: number;
  /** Per project of a killed replica: from the SIGKILL to the claim of its lease, seconds. */
  readonly claimed: Percentiles;
  /** ... to its first commit by another replica (its first poll there), seconds. */
  readonly polled: Percentiles;
  /** The same, divided by the lease. */
  readonly claimedRatio: Percentiles;
  readonly polledRatio: Percentiles;
  /** The largest `pgcp_projects_unowned` a surviving replica showed during a handover. */
  readonly unownedSeen: number;
}

const REPLICAS = 3;
const LEASE_SECONDS = 2;

export async function measureHandover(
  ctx: BenchContext,
  options: { readonly projects: number; readonly cli: string },
): Promise<HandoverRun> {
  const { projects, cli } = options;
  ctx.log(`handover: ${REPLICAS} replicas, ${projects} projects, a ${LEASE_SECONDS} s lease`);
  const given = process.env.PGCP_TEST_POSTGRES_URL;
  const server =
    given === undefined || given === ""
      ? await startThrowawayCluster()
      : { url: given, stop: () => Promise.resolve() };
  const dir = await newScratch(ctx.scratch, "handover-");
  const sim = await startSimWorker();
  const daemons = new DaemonGroup();
  const db = await createDatabase(server.url, "pgcp_bench_handover");
  try {
    await sim.run("seedBulk", { projects, operationsPerProject: 5 });
    const configFile = path.join(dir, "config.yaml");
    await writeReplicaConfig(configFile, {
      apiUrl: sim.apiUrl,
      stateUrl: db.url,
      leaseSeconds: LEASE_SECONDS,
    });
    let started = 0;
    const launch = () =>
      launchReplica(daemons, `r${String(++started)}`, configFile, {
        cli,
        env: { PGCP_API_KEY: API_KEY },
        output: "other",
        keepLog: (line) => line.level === "error" || line.level === "fatal",
      });
    let live = await Promise.all(Array.from({ length: REPLICAS }, launch));

    const claimed: number[] = [];
    const polled: number[] = [];
    let unownedSeen = 0;
    for (let round = 0; round < ctx.runs; round++) {
      await settle(db.pool, live, projects);
      const [victim, ...others] = live as [Replica, ...Replica[]];
      const orphans = await heldBy(db.pool, victim);
      const killedAt = performance.now();
      await victim.cli.stop("SIGKILL");
      // Nothing of the killed replica's can be committed from here on.
      const before = await sequences(db.pool, orphans);
      const claimedAt = new Map<string, number>();
      const polledAt = new Map<string, number>();
      await waitFor(
        "the killed replica's projects to be polled by the others",
        async () => {
          const now = performance.now();
          const holders = await liveHolders(db.pool);
          const after = await sequences(db.pool, orphans);
          for (const project of orphans) {
            const holder = holders.get(project);
            if (!claimedAt.has(project) && holder !== undefined && holder !== victim.id) {
              claimedAt.set(project, now);
            }
            const commit = after.get(project);
            if (!polledAt.has(project) && commit !== undefined) {
              if (
                commit.by !== victim.id &&
                commit.sequence > (before.get(project)?.sequence ?? 0)
              ) {
                polledAt.set(project, now);
              }
            }
          }
          for (const replica of others) unownedSeen = Math.max(unownedSeen, await unowned(replica));
          return polledAt.size === orphans.length;
        },
        LEASE_SECONDS * 10_000,
        20,
      );
      for (const project of orphans) {
        claimed.push(((claimedAt.get(project) ?? NaN) - killedAt) / 1000);
        polled.push(((polledAt.get(project) ?? NaN) - killedAt) / 1000);
      }
      ctx.log(
        `handover round ${String(round + 1)}: ${String(orphans.length)} projects polled again after ` +
          `${Math.max(...orphans.map((p) => (polledAt.get(p) ?? NaN) - killedAt)).toFixed(0)} ms`,
      );
      live = [...others, await launch()];
    }
    const ratio = (values: number[]) => percentiles(values.map((v) => v / LEASE_SECONDS));
    return {
      replicas: REPLICAS,
      projects,
      leaseSeconds: LEASE_SECONDS,
      heartbeatSeconds: LEASE_SECONDS / 3,
      pollIntervalSeconds: QUICK_POLL.interval,
      kills: ctx.runs,
      claimed: percentiles(claimed),
      polled: percentiles(polled),
      claimedRatio: ratio(claimed),
      polledRatio: ratio(polled),
      unownedSeen,
    };
  } finally {
    await daemons.killAll();
    await sim.close();
    await db.drop();
    await server.stop();
    await removeScratch(dir);
  }
}

/** Every project held by one of `live`, each its even share, and committed since it was held. */
async function settle(db: DatabaseQuery, live: readonly Replica[], projects: number) {
  const ids = new Set(live.map((r) => r.id));
  await waitFor(
    "an even split, every project committed by its holder",
    async () => {
      const holders = await liveHolders(db);
      const commits = await sequences(db);
      if (holders.size !== projects || commits.size !== projects) return false;
      const counts = new Map<string, number>();
      for (const [project, holder] of holders) {
        if (!ids.has(holder) || commits.get(project)?.by !== holder) return false;
        counts.set(holder, (counts.get(holder) ?? 0) + 1);
      }
      const shares = [...counts.values()];
      return counts.size === live.length && Math.max(...shares) - Math.min(...shares) <= 1;
    },
    60_000,
    100,
  );
}

type DatabaseQuery = Parameters<typeof liveHolders>[0];

/** Each project's latest commit: its sequence and the replica that made it. */
async function sequences(
  db: DatabaseQuery,
  projectIds?: readonly string[],
): Promise<Map<string, { sequence: number; by: string }>> {
  const { rows } = await db.query<{ project_id: string; sequence: string; committed_by: string }>(
    `SELECT project_id, sequence::text, committed_by FROM pgcp_project_state
      WHERE $1::text[] IS NULL OR project_id = ANY($1::text[])`,
    [projectIds ?? null],
  );
  return new Map(
    rows.map((r) => [r.project_id, { sequence: Number(r.sequence), by: r.committed_by }]),
  );
}

/** A replica's `pgcp_projects_unowned` (0 when it shows none). */
async function unowned(replica: Replica): Promise<number> {
  const response = await fetch(`${replica.url}/metrics`);
  return findSample(parseExposition(await response.text()), "pgcp_projects_unowned")?.value ?? 0;
}
