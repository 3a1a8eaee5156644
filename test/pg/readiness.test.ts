/**
 * The Postgres state store out of reach while the real daemon (`node dist/cli.js run`) runs:
 * `/readyz` names the store and why (never its password): in its 200 answer at first, and with a
 * 503 once the replica has given its projects up (its lease ran out), and 200 again once the
 * store is back. The outage begins after start: the test's database stops accepting connections
 * and its sessions are ended, then it accepts them again.
 */
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { QUICK_POLL, UNTHROTTLED_API, writeDaemonConfig } from "../support/daemon-config.js";
import { DaemonGroup, type DaemonProcess } from "../support/daemon-process.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { tempDir } from "../support/temp-dir.js";
import { waitFor } from "../support/wait.js";
import { createTestDatabase, describePg, PG_ADMIN_URL, type TestDatabase } from "./support.js";

describePg("a state store that goes out of reach", () => {
  let db: TestDatabase;
  let sim: TestSimulator;
  const daemons = new DaemonGroup();

  beforeAll(async () => {
    db = await createTestDatabase("pgcp_readiness");
    sim = await startTestSimulator();
  });
  afterAll(async () => {
    await daemons.killAll();
    await sim.close();
    await admin(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`);
    await db.drop();
  });

  /** Runs `sql` on the server's admin database. */
  async function admin(sql: string): Promise<void> {
    const client = new pg.Client({ connectionString: PG_ADMIN_URL });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  }

  /** Waits until `/readyz` answers `status` (200: `OK`, naming no problem); returns its body. */
  function readyz(daemon: DaemonProcess, status: number): Promise<string> {
    return waitFor(`/readyz to answer ${status}`, async () => {
      const answer = await fetch(`${await daemon.url}/readyz`);
      const text = await answer.text();
      // 200 with no problem named: a problem is named in a 200 answer while it holds.
      const wanted = answer.status === status && (status !== 200 || text === "OK\n");
      return wanted ? text : undefined;
    });
  }

  it("makes /readyz name the store while it is out of reach, and ready again once it is back", async () => {
    const id = (await sim.sim.createProject({ availability_checks: false })).project.id;
    const dir = await tempDir("pgcp-pg-readiness-");
    const file = path.join(dir, "config.yaml");
    await writeDaemonConfig(file, {
      api: { url: sim.apiUrl, ...UNTHROTTLED_API, maxAttempts: 1 },
      projects: [id],
      state: { dir: path.join(dir, "unused"), leaseDuration: 3 },
      poll: { ...QUICK_POLL, jitter: 0 },
      log: { level: "info", format: "json" },
    });
    const daemon = daemons.spawn(file, {
      env: { PGCP_API_KEY: sim.apiKey, PGCP_STATE_URL: db.url },
    });
    expect(await daemon.startedOrExit, daemon.tail()).toBeDefined();
    expect(await readyz(daemon, 200)).toBe("OK\n");

    // The outage: no new session, and those open are ended.
    await admin(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS false`);
    await admin(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${db.name}'`,
    );
    const early = await waitFor("the store named while still ready", async () => {
      const answer = await fetch(`${await daemon.url}/readyz`);
      const text = await answer.text();
      return answer.status === 200 && text.startsWith("OK, but: the state store")
        ? text
        : undefined;
    });
    const body = await readyz(daemon, 503);
    expect(body).toMatch(/^not ready: the state store is unreachable: .+\n$/);
    expect(body).toContain("not currently accepting connections");

    await admin(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`);
    expect(await readyz(daemon, 200)).toBe("OK\n");

    const password = new URL(db.url).password;
    expect(password).not.toBe("");
    for (const text of [early, body, daemon.text()]) expect(text).not.toContain(password);
  }, 60_000);
});
