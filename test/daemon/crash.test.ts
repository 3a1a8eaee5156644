/**
 * Invariants 1 and 2 (docs/design.md) across `kill -9`: the real daemon (`node dist/cli.js run`)
 * runs as a child process against an in-process simulator with live traffic, and is killed with
 * SIGKILL at random moments, many times in a row: during start-up, in the middle of a walk, between
 * the temporary file and its rename, between the rename and the log line. A last run catches up
 * with the frozen simulator and is stopped with SIGTERM. The end-state arrivals persisted on disk
 * must then equal the simulator's ground truth exactly, project by project.
 *
 * The seed of the kill moments and of the clock steps is printed; `CRASH_TEST_SEED=<n>` replays
 * them (the interleaving with the daemon's own timers is still up to the wall clock).
 * `dist/cli.js` must be built (`npm test` builds it first).
 */
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileStateStore, LOCK_FILE, parseState, type ProjectState } from "../../src/store/index.js";
import { SMALL_PAGES, UNTHROTTLED_API, writeDaemonConfig } from "../support/daemon-config.js";
import { CLI, DaemonGroup, errorsLogged, type DaemonProcess } from "../support/daemon-process.js";
import { keepClockMoving } from "../support/moving-clock.js";
import { seededChoices } from "../support/random.js";
import {
  slowOperationReads,
  startTestSimulator,
  type TestSimulator,
} from "../support/simulator.js";
import { failureNotes } from "../support/failure-notes.js";
import { removeDir, tempDir } from "../support/temp-dir.js";
import { sleep } from "../support/wait.js";
import { committedArrivals, diffArrivals, truthArrivals, type Arrivals } from "../sync/support.js";

const PROJECTS = 4;
/** Runs ended by SIGKILL before the last, clean run. */
const KILLS = 16;
/** A run is killed this long (ms) after it started: uniform in the range. */
const RUN_MS = { min: 150, max: 1500 } as const;
/** The clock moves this many simulated seconds every `STEP_MS` of wall time. */
const STEP_SECONDS = { min: 2, max: 5 } as const;
const STEP_MS = { min: 50, max: 100 } as const;
/** `tick` kills land this long (ms) after a whole second of the wall clock. */
const TICK_WINDOW_MS = { min: 0, max: 250 } as const;
/** How long the last run may take to catch up with the frozen simulator. */
const CATCH_UP_MS = 30_000;
/** Once caught up, the last run keeps polling this long: a late double count shows too. */
const SETTLE_MS = 2_500;

const STATE_SUFFIX = ".state.json";
/** The store's temporary files (`<project>.state.json.<random>.tmp`, renamed over the state) and write probes. */
const TEMPORARY = /^(?:.+\.state\.json\..+\.tmp|\.write-probe-[0-9a-f]+)$/;
/**
 * The daemon's lock on the directory (left by a killed run, replaced by the next), or what a run
 * killed while taking it left (`<lock>.<random>.tmp`, `<lock>.takeover`).
 */
const isLock = (name: string) => name.startsWith(LOCK_FILE);

/**
 * Errors the daemon logged (an unusable state file, a failed commit, a crash): none is expected,
 * whenever it is killed. Warnings (a failed poll) are not failures by themselves: the equality
 * at the end says whether anything was lost.
 */
function problems(run: string, daemon: DaemonProcess): string[] {
  return errorsLogged(daemon, `${run} logged`);
}

function warningsOf(run: string, daemon: DaemonProcess): string[] {
  return daemon.logs
    .filter((l) => l.level === "warn")
    .map((l) => `  ${run} warned: ${JSON.stringify(l)}`);
}

interface DiskState {
  readonly states: Map<string, ProjectState>;
  /** Temporary files left by a commit cut short (never taken for state). */
  readonly temporaries: string[];
}

/** Every state file in `dir`, validated with `parseState`; any other file fails the test. */
async function readDisk(dir: string): Promise<DiskState> {
  const states = new Map<string, ProjectState>();
  const temporaries: string[] = [];
  // The daemon creates the directory when it starts: a run killed earlier leaves none.
  const names = existsSync(dir) ? await readdir(dir) : [];
  for (const name of names.sort()) {
    if (TEMPORARY.test(name)) {
      temporaries.push(name);
      continue;
    }
    if (isLock(name)) continue;
    expect(name, `unexpected file in the state directory: ${name}`).toMatch(/\.state\.json$/);
    const projectId = name.slice(0, -STATE_SUFFIX.length);
    const file = path.join(dir, name);
    // A commit is a rename: the file is always a complete document, whenever it is read.
    states.set(projectId, parseState(file, await readFile(file, "utf8"), projectId));
  }
  return { states, temporaries };
}

function sequenceSum(disk: DiskState): number {
  let sum = 0;
  for (const s of disk.states.values()) sum += s.sequence;
  return sum;
}

/** Counts in `committed` above those of `truth`: an over-count, wrong at any moment. */
function overCounts(project: string, committed: Arrivals, truth: Arrivals): string[] {
  return Object.keys(committed)
    .filter((k) => (committed[k] ?? 0) > (truth[k] ?? 0))
    .map((k) => `${project} ${k}: committed ${committed[k] ?? 0}, truth ${truth[k] ?? 0}`);
}

/**
 * When a run is killed, counted from its spawn or from its "exporter started" line:
 * - `spawn`: a random moment from the spawn (start-up, loading state, discovery, first polls);
 * - `started`: a random moment of steady polling;
 * - `tick`: a random moment shortly after one of the scheduler's ticks, while its polls run.
 */
type KillTiming = "spawn" | "started" | "tick";

function killTiming(run: number): KillTiming {
  const cycle: readonly KillTiming[] = ["spawn", "tick", "started", "tick"];
  return cycle[(run - 1) % cycle.length] ?? "started";
}

/** What one killed run left behind, to show that kills landed where they matter. */
interface KillReport {
  readonly run: number;
  readonly afterMs: number;
  readonly from: KillTiming;
  /** Commits on disk made by this run. */
  readonly commits: number;
  /** Commits this run logged ("poll committed"). */
  readonly commitsLogged: number;
  /** Logged commits that left a catch-up segment open. */
  readonly segments: number;
  /** Operations requests the simulator served this run, and those the logged commits made. */
  readonly requestsServed: number;
  readonly requestsCommitted: number;
  /** Temporary files this run left behind (killed between writing one and its rename). */
  readonly temporaries: number;
}

/** A poll was in flight at the kill: requests not covered by a logged commit, or a commit
 * cut short or not yet logged. */
function midPoll(r: KillReport): boolean {
  return r.requestsServed > r.requestsCommitted || r.commits > r.commitsLogged || r.temporaries > 0;
}

describe("crash safety of the daemon", () => {
  let sim: TestSimulator;
  let dir: string;
  let stopClock: (() => Promise<void>) | undefined;
  const daemons = new DaemonGroup();

  const choices = seededChoices("CRASH_TEST_SEED");
  const { seed } = choices;
  const between = (range: { min: number; max: number }) => choices.between(range.min, range.max);

  beforeAll(async () => {
    dir = await tempDir("pgcp-crash-");
    sim = await startTestSimulator({
      startTime: new Date(),
      availabilityCheckSeconds: 120,
      traffic: {
        projects: PROJECTS,
        operationsPerMinute: 60,
        failureShare: 0.15,
        retryShare: 0.5,
        slowShare: 0.05,
        cancellationShare: 0.05,
        seed,
      },
    });
  });

  afterAll(async () => {
    await stopClock?.();
    await daemons.killAll();
    await sim.close();
    await removeDir(dir);
  });

  /** Moves the simulated clock in small steps until stopped, so traffic keeps coming. */
  const startClock = () =>
    keepClockMoving(sim, { seconds: () => between(STEP_SECONDS), pauseMs: () => between(STEP_MS) });

  // The key comes from the environment, with none of the caller's PGCP_* variables.
  const launch = (configFile: string): DaemonProcess =>
    daemons.spawn(configFile, { env: { PGCP_API_KEY: sim.apiKey } });

  const operationsRequests = async (): Promise<number> => {
    const { routes } = await sim.sim.stats();
    let n = 0;
    for (const route of ["listOperations", "getOperation"]) {
      for (const count of Object.values(routes[route] ?? {})) n += count;
    }
    return n;
  };

  it(
    "persists exactly the simulator's end-state arrivals across repeated SIGKILLs",
    { timeout: 120_000 },
    async () => {
      expect(existsSync(CLI), `${CLI} is missing: run npm run build first`).toBe(true);
      const note = failureNotes();
      note(choices.replayLine("crash test"));
      const since = new Date(sim.simulator.now().getTime() - 1000).toISOString();

      // Slow reads: a good share of the kills land while a walk is in flight.
      await slowOperationReads(sim);

      const projectIds = await sim.projectIds();
      expect(projectIds).toHaveLength(PROJECTS);

      const configFile = path.join(dir, "config.yaml");
      const stateDir = path.join(dir, "state");
      await writeDaemonConfig(configFile, {
        api: { url: sim.apiUrl, ...UNTHROTTLED_API, timeout: 10 },
        projects: "all",
        discoveryInterval: 2,
        state: { dir: stateDir },
        poll: { interval: 1, fastInterval: 1, endpointsInterval: 0, ...SMALL_PAGES },
      });

      const reports: KillReport[] = [];
      const failures: string[] = [];
      const warnings: string[] = [];
      let previous: DiskState = { states: new Map(), temporaries: [] };
      stopClock = startClock();

      for (let run = 1; run <= KILLS; run++) {
        await sim.sim.resetStats();
        const daemon = launch(configFile);
        const from = killTiming(run);
        const origin = Date.now();
        if (from !== "spawn") {
          const exitedEarly = (await daemon.startedOrExit) === undefined;
          expect(exitedEarly, `run ${run} exited before it started:\n${daemon.tail()}`).toBe(false);
        }
        const startedAt = from === "spawn" ? origin : Date.now();
        let killAt = startedAt + between(RUN_MS);
        if (from === "tick") {
          // The scheduler's tick fires on whole seconds of the wall clock: aim at the polls
          // it has just dispatched.
          killAt = Math.floor(killAt / 1000) * 1000 + between(TICK_WINDOW_MS);
          if (killAt < startedAt + RUN_MS.min) killAt += 1000;
        }
        const afterMs = Math.round(killAt - startedAt);
        await sleep(killAt - Date.now());
        expect(daemon.child.exitCode, `run ${run} exited by itself:\n${daemon.tail()}`).toBeNull();
        expect((await daemon.stop("SIGKILL")).signal).toBe("SIGKILL");

        const disk = await readDisk(stateDir);
        const committedLogs = daemon.logs.filter((l) => l.msg === "poll committed");
        const report: KillReport = {
          run,
          afterMs,
          from,
          commits: sequenceSum(disk) - sequenceSum(previous),
          commitsLogged: committedLogs.length,
          segments: committedLogs.filter((l) => l.catchingUp === true).length,
          requestsServed: await operationsRequests(),
          requestsCommitted: committedLogs.reduce(
            (sum, l) => sum + (typeof l.requests === "number" ? l.requests : 0),
            0,
          ),
          temporaries: disk.temporaries.length - previous.temporaries.length,
        };
        reports.push(report);
        failures.push(...problems(`run ${run}`, daemon));
        warnings.push(...warningsOf(`run ${run}`, daemon));

        // Whatever the moment of the kill: state files only move forward, and never count an
        // arrival that has not happened (the truth is read after the files, so it is not older).
        for (const [id, state] of disk.states) {
          const before = previous.states.get(id);
          if (before !== undefined) {
            expect(state.sequence, `${id} went back after run ${run}`).toBeGreaterThanOrEqual(
              before.sequence,
            );
          }
          const committed = committedArrivals(state);
          const earlier = committedArrivals(before);
          for (const [k, n] of Object.entries(earlier)) {
            expect(
              committed[k] ?? 0,
              `${id} ${k} decreased after run ${run}`,
            ).toBeGreaterThanOrEqual(n);
          }
          const over = overCounts(id, committed, await truthArrivals(sim, id, since));
          expect(over, `over-count after run ${run}:\n${daemon.tail()}`).toEqual([]);
        }
        previous = disk;
      }

      // Freeze the truth, and let one last run catch up with it.
      await stopClock();
      stopClock = undefined;
      const truth = new Map<string, Arrivals>();
      for (const id of projectIds) truth.set(id, await truthArrivals(sim, id, since));
      let arrivalsTotal = 0;
      for (const arrivals of truth.values()) {
        for (const n of Object.values(arrivals)) arrivalsTotal += n;
      }
      const differences = (disk: DiskState): string[] =>
        projectIds.flatMap((id) =>
          diffArrivals(id, committedArrivals(disk.states.get(id)), truth.get(id) ?? {}),
        );
      const caughtUp = (disk: DiskState): boolean =>
        differences(disk).length === 0 &&
        projectIds.every((id) => disk.states.get(id)?.segment === null);

      const last = launch(configFile);
      const lastSpawned = Date.now();
      const deadline = lastSpawned + CATCH_UP_MS;
      let disk = await readDisk(stateDir);
      while (!caughtUp(disk) && Date.now() < deadline && last.child.exitCode === null) {
        await sleep(200);
        disk = await readDisk(stateDir);
      }
      const catchUpMs = caughtUp(disk) ? Date.now() - lastSpawned : undefined;
      if (catchUpMs !== undefined) await sleep(SETTLE_MS);
      const exit = await last.stop("SIGTERM");
      expect(exit, `the last run did not stop cleanly:\n${last.tail()}`).toEqual({
        code: 0,
        signal: null,
      });
      disk = await readDisk(stateDir);
      failures.push(...problems("the last run", last));
      warnings.push(...warningsOf("the last run", last));

      const midPolls = reports.filter(midPoll);
      const withCommits = reports.filter((r) => r.commits > 0);
      note(
        [
          `kills: ${reports.length}; after a commit of the run: ${withCommits.length}; ` +
            `with a poll in flight: ${midPolls.length}; ` +
            `between a temporary file and its rename: ${reports.filter((r) => r.temporaries > 0).length}`,
          ...reports.map(
            (r) =>
              `  run ${r.run}: killed ${r.afterMs} ms after ${r.from === "spawn" ? "spawn" : "start"}${r.from === "tick" ? " (aimed at a tick)" : ""}; commits ${r.commits} ` +
              `(logged ${r.commitsLogged}, catch-up ${r.segments}); operations requests ${r.requestsServed} ` +
              `(in logged commits ${r.requestsCommitted}); temporary files left ${r.temporaries}` +
              (midPoll(r) ? "  <- mid-poll" : ""),
          ),
          `truth: ${arrivalsTotal} end-state arrivals; the last run caught up in ` +
            `${catchUpMs === undefined ? "(never)" : `${catchUpMs} ms`}, ` +
            `${disk.states.size} state files, sequence total ${sequenceSum(disk)}, ` +
            `${disk.temporaries.length} temporary files left over; ${warnings.length} warnings`,
          ...warnings,
        ].join("\n"),
      );

      expect(failures, failures.join("\n\n")).toEqual([]);
      const diff = differences(disk);
      expect(
        diff,
        `committed arrivals differ from the truth:\n${diff.join("\n")}\n\nlast run:\n${last.tail()}`,
      ).toEqual([]);
      expect([...disk.states.keys()].sort()).toEqual(projectIds);
      for (const id of projectIds) expect(disk.states.get(id)?.segment).toBeNull();
      // The restarts were real: runs were killed after committing, and others resumed from it.
      expect(withCommits.length).toBeGreaterThan(0);
      // Temporary files left by cut-short commits are never taken for a project's state.
      const store = new FileStateStore(stateDir);
      expect(await store.projects()).toEqual(projectIds);
    },
  );
});
