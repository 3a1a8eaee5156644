/**
 * What each replica shows of the others: three replicas of the real daemon (`node dist/cli.js
 * run`) share six projects of one simulator through one Postgres (leases of 3 s). Each one's
 * /metrics and status page give its replica id, the live replicas, its projects of the fleet's
 * total and its share, and no project without a live holder. One is killed with SIGKILL:
 * `pgcp_projects_unowned` rises once its leases expire, and is 0 again on both others once they
 * have taken its projects over, which they then show as their larger share.
 *
 * `dist/cli.js` must be built (`npm run test:pg` builds it first).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it, onTestFailed } from "vitest";
import { findSample, parseExposition } from "../support/exposition.js";
import { CLI, DaemonGroup } from "../support/daemon-process.js";
import {
  heldBy,
  launchReplica,
  liveHolders,
  writeReplicaConfig,
  type Replica,
} from "../support/replica-fleet.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { removeDir, tempDir } from "../support/temp-dir.js";
import { waitFor } from "../support/wait.js";
import { createMigratedDatabase, describePg, type TestDatabase } from "./support.js";

const PROJECTS = 6;
const LEASE_SECONDS = 3;
const API_KEY = "pgcp-replica-status-key";

/** What a replica's /metrics says of the replicas. */
interface Standing {
  readonly id: string | undefined;
  readonly live: number | undefined;
  readonly held: number;
  readonly target: number | undefined;
  readonly fleet: number | undefined;
  readonly unowned: number | undefined;
}

async function standingOf(replica: Replica): Promise<Standing> {
  const samples = parseExposition(await (await fetch(`${replica.url}/metrics`)).text());
  const value = (name: string) => findSample(samples, name)?.value;
  return {
    id: findSample(samples, "pgcp_lease_replica_info")?.labels.replica,
    live: value("pgcp_lease_replicas"),
    held: samples.filter((s) => s.name === "pgcp_lease_held").length,
    target: value("pgcp_lease_target_projects"),
    fleet: value("pgcp_lease_fleet_projects"),
    unowned: value("pgcp_projects_unowned"),
  };
}

async function statusPageOf(replica: Replica): Promise<string> {
  return (await fetch(`${replica.url}/`)).text();
}

describePg("what each of several replicas shows", () => {
  let db: TestDatabase;
  let sim: TestSimulator;
  let dir: string;
  const daemons = new DaemonGroup();

  beforeAll(async () => {
    dir = await tempDir("pgcp-replica-status-");
    db = await createMigratedDatabase("pgcp_replica_status");
    sim = await startTestSimulator({ startTime: new Date(), apiKey: API_KEY });
    for (let i = 0; i < PROJECTS; i++) await sim.sim.createProject();
  });

  afterAll(async () => {
    await daemons.killAll();
    await sim.close();
    await db.drop();
    await removeDir(dir);
  });

  it("gives each replica's id, the live replicas, its share of the fleet, and the projects no live replica holds", async () => {
    expect(existsSync(CLI), `${CLI} is missing: run npm run build first`).toBe(true);
    const configFile = path.join(dir, "config.yaml");
    await writeReplicaConfig(configFile, {
      apiUrl: sim.apiUrl,
      stateUrl: db.url,
      leaseSeconds: LEASE_SECONDS,
    });
    const env = { env: { PGCP_API_KEY: API_KEY } };
    const replicas = await Promise.all(
      ["r1", "r2", "r3"].map((name) => launchReplica(daemons, name, configFile, env)),
    );
    onTestFailed(() => {
      for (const r of replicas) console.log(`--- ${r.name} (${r.id}):\n${r.cli.tail(30)}`);
    });
    const [r1, r2, r3] = replicas as [Replica, Replica, Replica];

    // --- three replicas, two projects each --------------------------------------------------
    const expected = (r: Replica, live: number, share: number): Standing => ({
      id: r.id,
      live,
      held: share,
      target: share,
      fleet: PROJECTS,
      unowned: 0,
    });
    const shows = async (live: Replica[], share: number) => {
      for (const r of live) {
        const standing = await standingOf(r);
        if (JSON.stringify(standing) !== JSON.stringify(expected(r, live.length, share))) {
          return false;
        }
      }
      return true;
    };
    await waitFor("each replica to show 2 of 6 projects among 3", () => shows(replicas, 2), 30_000);
    for (const r of replicas) {
      expect(await standingOf(r)).toEqual(expected(r, 3, 2));
      expect(await heldBy(db.pool, r)).toHaveLength(2);
      const page = await statusPageOf(r);
      expect(page).toContain(`<code id="replica-id">${r.id}</code>`);
      expect(page).toContain('one of <b id="replica-live">3</b> live replicas');
      expect(page).toContain(
        'holds <b id="replica-held">2</b> of the fleet\'s <b id="replica-fleet">6</b> projects (its share: 2)',
      );
      expect(page).toContain("<b>2</b> projects held by this replica");
      expect(page).toContain('<p id="replica-unowned">Every project has a live holder.</p>');
    }

    // --- SIGKILL: its projects have no live holder once its leases expire, then are taken --
    const orphans = await heldBy(db.pool, r1);
    expect((await r1.cli.stop("SIGKILL")).signal).toBe("SIGKILL");
    const survivors = [r2, r3];
    let highest = 0;
    await waitFor(
      "the others to count the killed replica's projects without a holder, then take them",
      async () => {
        const seen = await Promise.all(survivors.map(standingOf));
        highest = Math.max(highest, ...seen.map((s) => s.unowned ?? 0));
        return highest > 0 && (await shows(survivors, 3));
      },
      20_000,
      25,
    );
    expect(highest).toBeGreaterThan(0);
    expect(highest).toBeLessThanOrEqual(orphans.length);
    const holders = await liveHolders(db.pool);
    expect(orphans.map((p) => holders.get(p)).every((h) => h === r2.id || h === r3.id)).toBe(true);
    for (const r of survivors) {
      expect(await standingOf(r)).toEqual(expected(r, 2, 3));
      const page = await statusPageOf(r);
      expect(page).toContain('one of <b id="replica-live">2</b> live replicas');
      expect(page).toContain('holds <b id="replica-held">3</b> of the fleet\'s');
      expect(page).toContain('<p id="replica-unowned">Every project has a live holder.</p>');
    }

    for (const r of survivors)
      expect(await r.cli.stop("SIGTERM")).toEqual({ code: 0, signal: null });
  });
});
