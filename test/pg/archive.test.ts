/**
 * The operations archive (`history: postgres`) across kills and restarts: the real daemon
 * (`node dist/cli.js run`) with the Postgres store watches projects with live traffic, and is
 * killed with SIGKILL many times in a row (and once stopped with SIGTERM), each time while it
 * polls; each new run waits for the killed one's leases to expire, claims the projects and goes
 * on from their committed checkpoints. A last run catches up with the frozen simulator. Then
 * the archive must hold every operation that ended exactly once, as it ended, and the counters
 * must equal the truth: the rows are written in the same transaction as the checkpoint.
 *
 * The seed is printed; `ARCHIVE_TEST_SEED=<n>` replays the choices (not the interleaving).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  QUICK_POLL,
  SMALL_PAGES,
  UNTHROTTLED_API,
  writeDaemonConfig,
} from "../support/daemon-config.js";
import { CLI, DaemonGroup, errorsLogged } from "../support/daemon-process.js";
import { failureNotes } from "../support/failure-notes.js";
import { keepClockMoving } from "../support/moving-clock.js";
import { seededChoices } from "../support/random.js";
import {
  slowOperationReads,
  startTestSimulator,
  type TestSimulator,
} from "../support/simulator.js";
import { removeDir, tempDir } from "../support/temp-dir.js";
import { sleep, waitFor } from "../support/wait.js";
import { committedArrivals, diffArrivals, truthArrivals, type Arrivals } from "../sync/support.js";
import { checkArchive, readStates } from "./checks.js";
import { createMigratedDatabase, describePg, type TestDatabase } from "./support.js";

const PROJECTS = 4;
const KILLS = 7;
const LEASE_SECONDS = 1.5;
const API_KEY = "pgcp-archive-test-key";

describePg("the operations archive across kills and restarts", () => {
  let db: TestDatabase;
  let sim: TestSimulator;
  let dir: string;
  const daemons = new DaemonGroup();
  const choices = seededChoices("ARCHIVE_TEST_SEED");
  const { seed, between } = choices;

  beforeAll(async () => {
    dir = await tempDir("pgcp-archive-");
    db = await createMigratedDatabase("pgcp_archive");
    sim = await startTestSimulator({
      startTime: new Date(),
      apiKey: API_KEY,
      traffic: {
        projects: PROJECTS,
        operationsPerMinute: 60,
        failureShare: 0.2,
        retryShare: 0.5,
        slowShare: 0.05,
        cancellationShare: 0.05,
        seed,
      },
    });
  });

  afterAll(async () => {
    await daemons.killAll();
    await sim.close();
    await db.drop();
    await removeDir(dir);
  });

  it(
    "holds every end-state operation exactly once, and counts exactly",
    { timeout: 150_000 },
    async () => {
      expect(existsSync(CLI), `${CLI} is missing: run npm run build first`).toBe(true);
      const note = failureNotes();
      note(choices.replayLine("archive test"));
      const since = new Date(sim.simulator.now().getTime() - 1000).toISOString();
      const projectIds = await sim.projectIds();
      expect(projectIds).toHaveLength(PROJECTS);
      // Slow reads: a good share of the kills land while a poll is in flight.
      await slowOperationReads(sim);

      const configFile = path.join(dir, "config.yaml");
      await writeDaemonConfig(configFile, {
        api: { url: sim.apiUrl, ...UNTHROTTLED_API, timeout: 10 },
        projects: "all",
        discoveryInterval: 2,
        state: { dir: path.join(dir, "unused"), url: db.url, leaseDuration: LEASE_SECONDS },
        history: "postgres",
        poll: { ...QUICK_POLL, ...SMALL_PAGES },
      });
      const launch = () => daemons.spawn(configFile, { env: { PGCP_API_KEY: API_KEY } });
      const heldBy = async (replica: string) =>
        (
          await db.query(
            "SELECT project_id FROM pgcp_leases WHERE holder = $1 AND expires_at > now()",
            [replica],
          )
        ).length;

      const stopClock = keepClockMoving(sim, {
        seconds: () => between(1, 3),
        pauseMs: () => between(50, 100),
      });

      const runs: string[] = [];
      const errors: string[] = [];
      for (let run = 1; run <= KILLS; run++) {
        const cli = launch();
        const started = await cli.startedOrExit;
        expect(started, `run ${run} exited before it started:\n${cli.text()}`).toBeDefined();
        const replica = String(started?.replica);
        // The previous run's leases expire, then this one claims every project.
        await waitFor(`run ${run} to hold every project`, async () =>
          (await heldBy(replica)) === PROJECTS ? true : undefined,
        );
        const commitsBefore = cli.logs.filter((l) => l.msg === "poll committed").length;
        // It goes on from the committed checkpoints; the kill lands a while after.
        await cli.waitForLog(`run ${run} to commit`, (l) => l.msg === "poll committed");
        await sleep(between(100, 1200));
        const graceful = run === Math.ceil(KILLS / 2);
        const exit = await cli.stop(graceful ? "SIGTERM" : "SIGKILL");
        expect(exit.signal ?? exit.code).toBe(graceful ? 0 : "SIGKILL");
        const commits = cli.logs.filter((l) => l.msg === "poll committed").length;
        runs.push(
          `run ${run}: ${graceful ? "SIGTERM" : "SIGKILL"}, ${commits - commitsBefore} commits after it held every project`,
        );
        errors.push(...errorsLogged(cli, `run ${run}`));
        if (graceful) {
          // A stopped replica released its leases: nothing waits for them to expire.
          expect(await heldBy(replica)).toBe(0);
        }
      }

      // Freeze the truth; a last run catches up with it.
      await stopClock();
      const truth = new Map<string, Arrivals>();
      for (const id of projectIds) truth.set(id, await truthArrivals(sim, id, since));
      const last = launch();
      await waitFor(
        "the last run to catch up with the truth",
        async () => {
          const states = await readStates(db);
          return projectIds.every(
            (id) =>
              states.get(id)?.segment === null &&
              diffArrivals(id, committedArrivals(states.get(id)), truth.get(id) ?? {}).length === 0,
          );
        },
        40_000,
        200,
      );
      await sleep(1500);
      expect(
        await last.stop("SIGTERM"),
        `the last run did not stop cleanly:\n${last.text()}`,
      ).toEqual({ code: 0, signal: null });
      errors.push(...errorsLogged(last, "last run"));

      const states = await readStates(db);
      const diff = projectIds.flatMap((id) =>
        diffArrivals(id, committedArrivals(states.get(id)), truth.get(id) ?? {}),
      );
      expect(diff, diff.join("\n")).toEqual([]);
      const archive = await checkArchive(db, sim, projectIds);
      expect(archive.problems, archive.problems.join("\n")).toEqual([]);
      expect(archive.ended).toBeGreaterThan(0);
      expect(errors, errors.join("\n")).toEqual([]);
      let arrivals = 0;
      for (const a of truth.values()) for (const n of Object.values(a)) arrivals += n;
      note(
        [
          `${arrivals} end-state arrivals, ${archive.ended} ended operations archived once each`,
          ...runs,
        ].join("\n"),
      );
    },
  );
});
