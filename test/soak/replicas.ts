/**
 * `npm run soak -- --replicas` (or `SOAK_MODE=replicas`; `npm run soak:replicas:ci` for the
 * short run CI makes): three replicas of the real daemon (`node dist/cli.js run`) share the
 * projects of a simulator with live traffic and failures through one PostgreSQL database
 * (`state.url`, leases of 3 s, `history: postgres`) on a throwaway server the soak starts
 * (`test/pg/cluster.ts`), and post their alerts to one webhook receiver. Each replica reaches the
 * database through its own TCP proxy (`test/support/tcp-proxy.ts`), directly or through a real
 * PgBouncer in transaction pooling mode (`test/pg/pgbouncer.ts`): each route in turn, on a
 * fresh database.
 *
 * Faults, one at a time with calm between them, drawn in a shuffled rotation from a seeded
 * generator:
 * - `kill`: SIGKILL of a random replica, started again after a random downtime;
 * - `db_crash`: the server stopped as a crash would (`pg_ctl -m immediate stop`), started again
 *   on the same port and data directory after a random downtime;
 * - `cut`: a replica cut off from the database (or PgBouncer) past its lease: its proxy resets
 *   its connections and refuses new ones, then heals;
 * - `pause`: a replica frozen with SIGSTOP past its lease, then resumed with SIGCONT;
 * - `terminate_backend`: `pg_terminate_backend` of random server processes of the replicas
 *   (`application_name` `pgcp-exporter`);
 * - `rolling_restart`: SIGTERM to each replica in turn; once it has exited (with status 0) it is
 *   started again and, once ready, the next one goes.
 *
 * At the end the clock stops and the replicas catch up; then checked, per route:
 * - the end-state arrivals committed equal the simulator's truth (missing and extra);
 * - every commit was made under the newest claim of its project by the replica that claimed it,
 *   in one unbroken sequence per project (triggers log the commits and claims), and the
 *   operations archive holds every ended operation once, as it ended;
 * - every project is exported (`pgcp_project_up`) by exactly one live replica;
 * - every failure of the truth reached the webhook (2xx) at least once, always under one alert
 *   id, and no failure alert came for anything else; each repeated delivery of an alert kept the
 *   Idempotency-Key of its first delivery;
 * - every replica stopped with SIGTERM exited with status 0, none exited by itself, none wrote
 *   anything but log lines, none logged `fatal`.
 * Reported besides: the longest time a project went unpolled, from the commit log: every poll
 * commits (an idle one too), so the longest gap between two commits of a project, by the
 * database's clock, from the start of the traffic to the end of the faults.
 *
 * Settings (environment): SOAK_SECONDS (of faults per route; default 240, `--ci` 40),
 * SOAK_PROJECTS (9; 6), SOAK_ROUTES (`direct,pgbouncer`), SOAK_FAULTS (all; a comma-separated
 * subset), SOAK_SEED (random, printed), SOAK_OUT (default `test/soak/results-replicas.json`;
 * `--ci`: `.bench/soak-replicas-ci.json`), SOAK_VERBOSE=1 (each fault's detail), SOAK_DUMP=DIR
 * (the webhook's requests and the replicas' warnings and errors, as JSON lines). Needs Debian's
 * `postgresql` package, and `pgbouncer` for that route (a route it lacks is skipped with a
 * warning, and is a failure under CI=true). Exit status 1 when a check fails.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import type { ProjectState } from "../../src/store/index.js";
import { PostgresStateStore } from "../../src/store/postgres-store.js";
import { writeJson } from "../bench/lib/json-file.js";
import {
  checkArchive,
  commitLogProblems,
  installCommitLog,
  readCommitLog,
  readStates,
  type CommitLog,
  type Database,
} from "../pg/checks.js";
import { POSTGRESQL_HINT, startThrowawayCluster, type ThrowawayCluster } from "../pg/cluster.js";
import { PGBOUNCER_HINT, startPgBouncer, type PgBouncer } from "../pg/pgbouncer.js";
import { UNTHROTTLED_API, writeDaemonConfig } from "../support/daemon-config.js";
import { labelValues } from "../support/exposition.js";
import { keepClockMoving } from "../support/moving-clock.js";
import { seededRandom, seedFromEnv, shuffled } from "../support/random.js";
import { startReceiver, type ReceivedRequest } from "../support/receiver.js";
import { startTestSimulator } from "../support/simulator.js";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.js";
import { removeDir } from "../support/temp-dir.js";
import { sleep } from "../support/wait.js";
import {
  committedArrivals,
  micros,
  truthEnds,
  type Arrivals,
  type TruthFailure,
} from "../sync/support.js";
import {
  alive,
  CLI,
  REPOSITORY,
  otherOutputProblems,
  SOAK_BATCHING,
  SOAK_POLL,
  SOAK_TRAFFIC,
  spawnRun,
  type DaemonRun,
} from "./daemon.js";
import { deliveredAlerts, webhookAlerts } from "./deliveries.js";
import { pick } from "./faults.js";
import {
  replicaSoakReport,
  type ReplicaFault,
  type ReplicaRouteResults,
  type ReplicaSoakResults,
  type UnpolledGap,
} from "./report.js";

const REPLICAS = 3;
const LEASE_SECONDS = 3;
const LEASE_MS = LEASE_SECONDS * 1000;
/** The `application_name` of the replicas' sessions, and of the soak's own. */
const REPLICA_APPLICATION = "pgcp-exporter";
const SOAK_APPLICATION = "pgcp-soak";
const API_KEY = "pgcp-replica-soak-key";

/** The failure transitions a replica logs are kept: what a lost alert's replica saw. */
const FAILURE_STATUSES = new Set(["failed", "error"]);

const ROUTES = ["direct", "pgbouncer"] as const;
type Route = (typeof ROUTES)[number];

export const REPLICA_FAULTS: readonly ReplicaFault[] = [
  "kill",
  "db_crash",
  "cut",
  "pause",
  "terminate_backend",
  "rolling_restart",
];

interface Range {
  readonly min: number;
  readonly max: number;
}

interface Profile {
  readonly ci: boolean;
  /** Seconds of faults per route. */
  readonly seconds: number;
  readonly projects: number;
  readonly routes: readonly Route[];
  readonly faults: readonly ReplicaFault[];
  /** Calm between two faults (ms). */
  readonly calmMs: Range;
  /** Downtime of a killed replica, and of the database (ms). */
  readonly killDownMs: Range;
  readonly crashDownMs: Range;
  /** How long past the lease a replica stays cut off or paused (ms). */
  readonly pastLeaseMs: Range;
  /** The replicas' time to catch up and deliver everything at the end. */
  readonly finalMs: number;
  /** Where to write the webhook's requests and the runs' kept log lines (SOAK_DUMP). */
  readonly dump: string | undefined;
}

function listFromEnv<T extends string>(name: string, all: readonly T[]): readonly T[] {
  const text = process.env[name];
  if (text === undefined || text.trim() === "") return all;
  const chosen = text.split(",").map((s) => s.trim());
  const unknown = chosen.filter((c) => !(all as readonly string[]).includes(c));
  if (unknown.length > 0 || chosen.length === 0) {
    throw new Error(`${name} must list some of ${all.join(", ")}; got ${text}`);
  }
  return chosen as T[];
}

function profile(): Profile {
  const ci = process.argv.includes("--ci");
  const seconds = Number(process.env.SOAK_SECONDS ?? (ci ? 40 : 240));
  const projects = Number(process.env.SOAK_PROJECTS ?? (ci ? 6 : 9));
  if (!(seconds >= 10) || !(projects >= REPLICAS)) {
    throw new Error(`SOAK_SECONDS must be at least 10 and SOAK_PROJECTS at least ${REPLICAS}`);
  }
  return {
    ci,
    seconds,
    projects,
    routes: listFromEnv("SOAK_ROUTES", ROUTES),
    faults: listFromEnv("SOAK_FAULTS", REPLICA_FAULTS),
    calmMs: ci ? { min: 500, max: 2500 } : { min: 1000, max: 8000 },
    killDownMs: { min: 0, max: 2 * LEASE_MS },
    crashDownMs: { min: 500, max: 2 * LEASE_MS },
    pastLeaseMs: { min: 500, max: 3000 },
    finalMs: ci ? 60_000 : 120_000,
    dump: process.env.SOAK_DUMP === undefined ? undefined : path.resolve(process.env.SOAK_DUMP),
  };
}

/** What the soak starts, stopped in reverse order at the end, also on failure or Ctrl-C. */
const cleanups: (() => Promise<unknown>)[] = [];
/** Set on Ctrl-C: nothing more is started. */
const interrupted = { now: false };

/** Registers `cleanup`; the function returned runs it now (once) and forgets it. */
function registerCleanup(cleanup: () => Promise<unknown>): () => Promise<void> {
  cleanups.push(cleanup);
  return async () => {
    const i = cleanups.indexOf(cleanup);
    if (i < 0) return;
    cleanups.splice(i, 1);
    await cleanup();
  };
}

let cleaning: Promise<void> | undefined;
/** Runs every cleanup left, newest first; a second call waits for the first. */
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      await cleanup().catch((error: unknown) => {
        process.stderr.write(`cleaning up failed: ${String(error)}\n`);
      });
    }
  })();
  return cleaning;
}

const t0 = performance.now();
const log = (message: string) => {
  const t = ((performance.now() - t0) / 1000).toFixed(0).padStart(4);
  process.stderr.write(`[${t} s] ${message}\n`);
};
const verbose = process.env.SOAK_VERBOSE === "1";

async function main(): Promise<void> {
  const p = profile();
  const seed = seedFromEnv("SOAK_SEED");
  const startedAt = new Date().toISOString();
  const out =
    process.env.SOAK_OUT ??
    path.join(
      REPOSITORY,
      p.ci ? ".bench/soak-replicas-ci.json" : "test/soak/results-replicas.json",
    );
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  log(
    `replica soak: ${p.seconds} s of faults per route (${p.routes.join(", ")}), ${p.projects} projects, ` +
      `${REPLICAS} replicas, seed ${seed} (replay with SOAK_SEED=${seed})`,
  );
  const ci = process.env.CI === "true";
  const problems: string[] = [];
  let cluster: ThrowawayCluster;
  try {
    cluster = await startThrowawayCluster({ durableCommits: true });
  } catch (error) {
    throw new Error(
      `no PostgreSQL server for the replica soak: ${error instanceof Error ? error.message : String(error)}; ${POSTGRESQL_HINT}`,
    );
  }
  cleanups.push(() => cluster.stop());
  await mkdir(path.join(REPOSITORY, ".bench"), { recursive: true });
  const dir = await mkdtemp(path.join(REPOSITORY, ".bench", "soak-replicas-"));
  cleanups.push(() => removeDir(dir));

  const routes: ReplicaRouteResults[] = [];
  const skipped: string[] = [];
  // One generator per route, from the seed: a route's choices do not depend on the other's.
  for (const [i, route] of p.routes.entries()) {
    let bouncer: PgBouncer | undefined;
    let stopBouncer = () => Promise.resolve();
    if (route === "pgbouncer") {
      try {
        const started = await startPgBouncer({ serverUrl: cluster.url });
        bouncer = started;
        stopBouncer = registerCleanup(() => started.stop());
      } catch (error) {
        const reason = `no PgBouncer: ${error instanceof Error ? error.message : String(error)}; ${PGBOUNCER_HINT}`;
        if (ci) throw new Error(reason);
        log(`route pgbouncer SKIPPED: ${reason}`);
        skipped.push(`pgbouncer: ${reason}`);
        continue;
      }
    }
    try {
      const results = await soakRoute({
        route,
        p,
        cluster,
        bouncer,
        dir: path.join(dir, route),
        random: seededRandom(seed + i),
        clockRandom: seededRandom(seed + 1000 + i),
      });
      routes.push(results);
      problems.push(...results.problems.map((problem) => `${route}: ${problem}`));
    } finally {
      await stopBouncer();
    }
  }

  const results: ReplicaSoakResults = {
    startedAt,
    seconds: (performance.now() - t0) / 1000,
    seed,
    replicas: REPLICAS,
    leaseSeconds: LEASE_SECONDS,
    routes,
    skipped,
    problems,
  };
  await writeJson(out, results);
  process.stdout.write(replicaSoakReport(results));
  log(
    problems.length === 0
      ? "replica soak passed"
      : `replica soak FAILED: ${problems.length} problems`,
  );
  for (const problem of problems.slice(0, 50)) process.stderr.write(`  - ${problem}\n`);
  process.exitCode = problems.length === 0 ? 0 : 1;
}

interface RouteSetup {
  readonly route: Route;
  readonly p: Profile;
  readonly cluster: ThrowawayCluster;
  readonly bouncer: PgBouncer | undefined;
  readonly dir: string;
  readonly random: () => number;
  /** The simulated clock's steps, apart, so that the faults' choices replay. */
  readonly clockRandom: () => number;
}

/** A replica's place: its name, its proxy to the database, and its current run. */
interface Slot {
  readonly name: string;
  readonly proxy: TcpProxy;
  run: DaemonRun;
}

/** A fault as it happened (wall-clock times, to set beside the database's; length monotonic). */
interface FaultRecord {
  readonly kind: ReplicaFault;
  readonly target: string | undefined;
  readonly fromMs: number;
  readonly toMs: number;
  readonly ms: number;
  readonly detail: string;
}

async function soakRoute(setup: RouteSetup): Promise<ReplicaRouteResults> {
  const { route, p, cluster, random } = setup;
  const between = (r: Range) => r.min + random() * (r.max - r.min);
  const problems: string[] = [];
  const routeCleanups = cleanups.length;
  const routeT0 = performance.now();
  log(`route ${route}: starting`);

  // The database: fresh, migrated, with the commit log. The soak reads it directly.
  const name = `pgcp_soak_${route}`;
  const admin = new pg.Client({
    connectionString: cluster.url,
    application_name: SOAK_APPLICATION,
  });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const serverUrl = new URL(cluster.url);
  serverUrl.pathname = `/${name}`;
  const store = new PostgresStateStore({ url: serverUrl.toString() });
  await store.open();
  await store.close();
  const pool = new pg.Pool({
    connectionString: serverUrl.toString(),
    application_name: SOAK_APPLICATION,
    max: 2,
  });
  // The database crashes on purpose: a broken idle connection is no news.
  pool.on("error", () => undefined);
  cleanups.push(() => pool.end());
  const db: Database = {
    query: async <R extends pg.QueryResultRow>(sql: string, params?: unknown[]) =>
      (await pool.query<R>(sql, params)).rows,
  };
  await installCommitLog(db);

  // Each replica's own proxy, in front of the server or of PgBouncer.
  const targetPort = setup.bouncer?.port ?? cluster.port;
  const proxies: TcpProxy[] = [];
  for (let i = 0; i < REPLICAS; i++) {
    const proxy = await startTcpProxy(targetPort);
    cleanups.push(() => proxy.close());
    proxies.push(proxy);
  }
  const urlThrough = (proxy: TcpProxy) => {
    const url = new URL(serverUrl);
    url.port = String(proxy.port);
    return url.toString();
  };

  const sim = await startTestSimulator({
    seed: Math.floor(random() * 2 ** 31),
    apiKey: API_KEY,
    startTime: new Date(),
    availabilityCheckSeconds: 120,
    traffic: { projects: p.projects, ...SOAK_TRAFFIC },
  });
  cleanups.push(() => sim.close());
  const hook = await startReceiver();
  cleanups.push(() => hook.close());

  const configFile = path.join(setup.dir, "config.yaml");
  await mkdir(setup.dir, { recursive: true });
  await writeDaemonConfig(configFile, {
    api: { url: sim.apiUrl, ...UNTHROTTLED_API, timeout: 5, maxAttempts: 2 },
    projects: "all",
    discoveryInterval: 5,
    // The URL (with its password) comes from each replica's environment, through its proxy.
    state: { dir: path.join(setup.dir, "unused"), leaseDuration: LEASE_SECONDS },
    history: "postgres",
    poll: SOAK_POLL,
    sinks: [
      {
        name: "hook",
        kind: "webhook",
        timeout: 2,
        ...SOAK_BATCHING,
        // Failures that join a platform incident are sent one by one too: each must arrive.
        holdIncidentAlerts: false,
      },
    ],
    log: { level: "info", format: "json" },
  });

  // --- the replicas ------------------------------------------------------------------------
  const runs: DaemonRun[] = [];
  /** Runs the soak sent SIGKILL or SIGTERM (any other end is a problem). */
  const signalled = new Map<DaemonRun, "SIGKILL" | "SIGTERM">();
  const spawnIn = (slotName: string, proxy: TcpProxy): DaemonRun => {
    if (interrupted.now) throw new Error("interrupted");
    const run = spawnRun(
      runs.length + 1,
      CLI,
      configFile,
      {
        PGCP_API_KEY: API_KEY,
        PGCP_STATE_URL: urlThrough(proxy),
        // Each replica posts to its own path: the receiver can tell who sent what.
        PGCP_WEBHOOK_URL: `${hook.url}/hook/${slotName}`,
      },
      (line) => line.transition === "ended" && FAILURE_STATUSES.has(String(line.status)),
    );
    runs.push(run);
    return run;
  };
  cleanups.push(async () => {
    for (const run of runs) {
      if (!running(run)) continue;
      run.child.kill("SIGCONT");
      run.child.kill("SIGKILL");
    }
    await Promise.all(runs.map((r) => r.exited));
  });
  const slots: Slot[] = proxies.map((proxy, i) => {
    const slotName = `r${String(i + 1)}`;
    return { name: slotName, proxy, run: spawnIn(slotName, proxy) };
  });
  const respawn = (slot: Slot) => {
    slot.run = spawnIn(slot.name, slot.proxy);
    return slot.run;
  };
  const send = (run: DaemonRun, signal: "SIGKILL" | "SIGTERM") => {
    signalled.set(run, signal);
    run.child.kill(signal);
  };
  /** The run logged that it started, within `ms` (false when it did not, or died first). */
  const startedWithin = async (run: DaemonRun, ms: number) =>
    (await Promise.race([run.startedOrExit, sleep(ms).then(() => undefined)])) !== undefined;
  const ready = async (run: DaemonRun) => {
    const url = run.metricsUrl;
    if (url === undefined) return false;
    try {
      const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) });
      await response.arrayBuffer();
      return response.status === 200;
    } catch {
      return false;
    }
  };
  /** Exit of a run within `ms`, or undefined. */
  const exitWithin = (run: DaemonRun, ms: number) =>
    Promise.race([run.exited, sleep(ms).then(() => undefined)]);

  const projectIds = await sim.projectIds();
  const states = async (): Promise<Map<string, ProjectState> | undefined> => {
    try {
      return await readStates(db);
    } catch {
      return undefined;
    }
  };
  // First commits with the clock frozen: every arrival after `since` is one to count.
  const firstDeadline = performance.now() + 60_000;
  for (;;) {
    const s = await states();
    if (s !== undefined && projectIds.every((id) => s.has(id))) break;
    const dead = slots.find((slot) => !running(slot.run));
    if (dead !== undefined) throw new Error(`${dead.name} exited: ${dead.run.tail()}`);
    if (performance.now() > firstDeadline) {
      throw new Error("the replicas did not commit every project within 60 s");
    }
    await sleep(200);
  }
  const since = micros(sim.simulator.now().toISOString());
  const trafficFromMs = Date.now();
  log(`route ${route}: ${projectIds.length} projects have a checkpoint; traffic and faults start`);
  const stopClock = keepClockMoving(sim, {
    seconds: () => 1 + setup.clockRandom() * 2,
    pauseMs: () => 100,
  });

  // --- the faults --------------------------------------------------------------------------
  const faults: FaultRecord[] = [];
  const terminated = { backends: 0 };
  const rolling = { restarts: 0, exitsNotZero: 0, notReadyWithin: 0 };
  const diedByThemselves = new Set<DaemonRun>();
  const reviveDead = () => {
    for (const slot of slots) {
      if (running(slot.run)) continue;
      if (!signalled.has(slot.run)) {
        diedByThemselves.add(slot.run);
        problems.push(`${slot.name} (run ${slot.run.n}) exited by itself: ${slot.run.tail(20)}`);
      }
      respawn(slot);
    }
  };
  const randomSlot = () => pick(random, slots);
  const doFault = async (kind: ReplicaFault): Promise<{ target?: string; detail: string }> => {
    switch (kind) {
      case "kill": {
        const slot = randomSlot();
        send(slot.run, "SIGKILL");
        await slot.run.exited;
        const down = between(p.killDownMs);
        await sleep(down);
        const run = respawn(slot);
        const started = await startedWithin(run, 30_000);
        return {
          target: slot.name,
          detail: `down ${(down / 1000).toFixed(1)} s${started ? "" : ", not started within 30 s"}`,
        };
      }
      case "db_crash": {
        await cluster.crash();
        const down = between(p.crashDownMs);
        await sleep(down);
        await cluster.restart();
        return { detail: `down ${(down / 1000).toFixed(1)} s (and its restart)` };
      }
      case "cut": {
        const slot = randomSlot();
        const ms = LEASE_MS + between(p.pastLeaseMs);
        slot.proxy.cut();
        await sleep(ms);
        slot.proxy.heal();
        return { target: slot.name, detail: `cut off ${(ms / 1000).toFixed(1)} s` };
      }
      case "pause": {
        const slot = randomSlot();
        const ms = LEASE_MS + between(p.pastLeaseMs);
        slot.run.child.kill("SIGSTOP");
        await sleep(ms);
        slot.run.child.kill("SIGCONT");
        return { target: slot.name, detail: `stopped ${(ms / 1000).toFixed(1)} s` };
      }
      case "terminate_backend": {
        const rows = await db.query<{ pid: number; application_name: string }>(
          `SELECT pid, application_name FROM pg_stat_activity
             WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid()
               AND application_name <> $2`,
          [name, SOAK_APPLICATION],
        );
        // The replicas' own sessions; PgBouncer's server connections carry their clients'
        // name while in use, and may carry none between.
        const named = rows.filter((r) => r.application_name === REPLICA_APPLICATION);
        const candidates = named.length > 0 ? named : rows;
        // As many draws whatever the candidates, so that the choices after it replay.
        const draws = [random(), random(), random(), random()];
        const chosen = new Set<number>();
        for (const d of draws.slice(1, 2 + Math.floor((draws[0] ?? 0) * 3))) {
          const candidate = candidates[Math.floor(d * candidates.length)];
          if (candidate !== undefined) chosen.add(candidate.pid);
        }
        for (const pid of chosen) await db.query("SELECT pg_terminate_backend($1)", [pid]);
        terminated.backends += chosen.size;
        return {
          detail: `${chosen.size} of ${rows.length} backends (${named.length} named ${REPLICA_APPLICATION})`,
        };
      }
      case "rolling_restart": {
        const notes: string[] = [];
        for (const slot of slots) {
          const before = slot.run;
          send(before, "SIGTERM");
          const exit = await exitWithin(before, 30_000);
          if (exit === undefined) {
            problems.push(
              `rolling restart: ${slot.name} (run ${before.n}) did not exit within 30 s`,
            );
            send(before, "SIGKILL");
            await before.exited;
          } else if (exit.code !== 0) {
            rolling.exitsNotZero += 1;
            problems.push(
              `rolling restart: ${slot.name} (run ${before.n}) exited with ${String(exit.code)} ${String(exit.signal)}: ${before.tail(20)}`,
            );
          }
          const run = respawn(slot);
          rolling.restarts += 1;
          const readyFrom = performance.now();
          let isReady = false;
          if (await startedWithin(run, 30_000)) {
            while (!isReady && performance.now() - readyFrom < 5 * LEASE_MS) {
              isReady = await ready(run);
              if (!isReady) await sleep(100);
            }
          }
          if (!isReady) rolling.notReadyWithin += 1;
          notes.push(
            `${slot.name} ${isReady ? "ready" : "NOT ready"} after ${((performance.now() - readyFrom) / 1000).toFixed(1)} s`,
          );
        }
        return { detail: notes.join(", ") };
      }
    }
  };

  const chaosEnd = performance.now() + p.seconds * 1000;
  let order: ReplicaFault[] = [];
  try {
    while (performance.now() < chaosEnd) {
      reviveDead();
      if (order.length === 0) order = shuffled(random, p.faults);
      const kind = order.pop() ?? "kill";
      const fromMs = Date.now();
      const from = performance.now();
      const done = await doFault(kind);
      const record: FaultRecord = {
        kind,
        target: done.target,
        fromMs,
        toMs: Date.now(),
        ms: performance.now() - from,
        detail: done.detail,
      };
      faults.push(record);
      if (verbose || p.ci) {
        log(`  ${kind}${record.target === undefined ? "" : ` ${record.target}`}: ${record.detail}`);
      }
      await sleep(between(p.calmMs));
    }
  } catch (error) {
    problems.push(`the faults stopped on an error: ${String(error)}`);
  }
  reviveDead();
  const trafficToMs = Date.now();

  // --- the end -----------------------------------------------------------------------------
  await stopClock();
  log(`route ${route}: ${faults.length} faults; the replicas catch up`);
  const truth = new Map<string, Arrivals>();
  const failures: { projectId: string; failure: TruthFailure }[] = [];
  for (const id of projectIds) {
    const ends = await truthEnds(sim, id, since);
    truth.set(id, ends.arrivals);
    failures.push(...ends.failures.map((failure) => ({ projectId: id, failure })));
  }
  // Each failure of the truth as `op status` (in the simulator's traffic an operation arrives
  // at each failure status at most once), with its project. Not by alert id: the id of a failure
  // seen only after a retry carries the failures count of the record read.
  const expectedFailures = new Map(
    failures.map(({ projectId, failure }) => [
      `${failure.operationId} ${failure.status}`,
      projectId,
    ]),
  );
  const delivered = () => deliveredAlerts(hook.requests, () => true);
  const catchUpFrom = performance.now();
  let caughtUp = false;
  let last: Map<string, ProjectState> | undefined;
  while (performance.now() - catchUpFrom < p.finalMs) {
    last = (await states()) ?? last;
    const s = last;
    const counted =
      s !== undefined &&
      projectIds.every(
        (id) =>
          arrivalDifference(committedArrivals(s.get(id)), truth.get(id) ?? {}).total === 0 &&
          s.get(id)?.segment === null &&
          s.get(id)?.outbox.length === 0,
      );
    const got = delivered().failures;
    if (counted && [...expectedFailures.keys()].every((f) => got.has(f))) {
      caughtUp = true;
      break;
    }
    await sleep(250);
  }
  const catchUpSeconds = (performance.now() - catchUpFrom) / 1000;
  if (!caughtUp) {
    const s = last ?? new Map<string, ProjectState>();
    const behind = projectIds.filter(
      (id) =>
        arrivalDifference(committedArrivals(s.get(id)), truth.get(id) ?? {}).total > 0 ||
        s.get(id)?.segment !== null,
    );
    const pending = projectIds.filter((id) => (s.get(id)?.outbox.length ?? 0) > 0);
    const got = delivered().failures;
    const undelivered = [...expectedFailures.keys()].filter((f) => !got.has(f)).length;
    problems.push(
      `the replicas did not catch up within ${p.finalMs / 1000} s: ${behind.length} projects behind the truth, ` +
        `${pending.length} with alerts pending, ${undelivered} failure alerts not delivered`,
    );
  }

  // Each project exported by exactly one live replica (given a few leases to settle).
  const exportedBy = async () => {
    const by = new Map<string, string[]>(projectIds.map((id) => [id, []]));
    for (const slot of slots) {
      const url = slot.run.metricsUrl;
      if (url === undefined || !running(slot.run)) continue;
      try {
        const response = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(2000) });
        for (const project of new Set(
          labelValues(await response.text(), "pgcp_project_up", "project"),
        )) {
          by.set(project, [...(by.get(project) ?? []), slot.name]);
        }
      } catch {
        // Counted as exporting nothing.
      }
    }
    return by;
  };
  let exported = await exportedBy();
  const settleFrom = performance.now();
  while (
    [...exported.values()].some((holders) => holders.length !== 1) &&
    performance.now() - settleFrom < 5 * LEASE_MS
  ) {
    await sleep(250);
    exported = await exportedBy();
  }
  const exportedTwice = [...exported]
    .filter(([, h]) => h.length > 1)
    .map(([id, h]) => `${id} (${h.join(", ")})`);
  const exportedByNone = [...exported].filter(([, h]) => h.length === 0).map(([id]) => id);
  problems.push(
    ...exportedTwice.map((e) => `project exported by several replicas at the end: ${e}`),
    ...exportedByNone.map((id) => `project exported by no replica at the end: ${id}`),
  );

  // A late double count or a late delivery would show in the next commits.
  await sleep(2000);
  for (const slot of slots) send(slot.run, "SIGTERM");
  let stoppedCleanly = 0;
  for (const slot of slots) {
    const exit = await exitWithin(slot.run, 30_000);
    if (exit?.code === 0) stoppedCleanly += 1;
    else {
      problems.push(
        `${slot.name} (run ${slot.run.n}) did not stop cleanly at the end: ${exit === undefined ? "still running after 30 s" : `${String(exit.code)} ${String(exit.signal)}`}`,
      );
    }
  }

  // --- the accounting ----------------------------------------------------------------------
  if (p.dump !== undefined) await dumpRoute(p.dump, route, hook.requests, runs);
  const final = await readStates(db);
  let missing = 0;
  let extra = 0;
  let arrivals = 0;
  for (const id of projectIds) {
    const truthOfProject = truth.get(id) ?? {};
    const d = arrivalDifference(committedArrivals(final.get(id)), truthOfProject);
    missing += d.missing;
    extra += d.extra;
    arrivals += Object.values(truthOfProject).reduce((a, b) => a + b, 0);
    problems.push(...d.lines.map((line) => `${id} ${line}`));
  }
  const commitLog = await readCommitLog(db);
  const commitProblems = commitLogProblems(projectIds, commitLog);
  problems.push(...commitProblems);
  const archive = await checkArchive(db, sim, projectIds);
  problems.push(...archive.problems.map((problem) => `archive: ${problem}`));
  const stillHeld = await db.query("SELECT project_id FROM pgcp_leases WHERE holder IS NOT NULL");
  if (stillHeld.length > 0) {
    problems.push(`${stillHeld.length} leases still held after every replica stopped`);
  }

  // Alerts: none lost, none under another id, each repeat under its first Idempotency-Key.
  const got = delivered();
  const lost = [...expectedFailures.keys()].filter((f) => !got.failures.has(f));
  const forNoFailure = [...got.failures].filter((f) => !expectedFailures.has(f));
  const underSeveralIds = [...got.idsByFailure].filter(([, ids]) => ids.size > 1);
  // What became of a lost one: its history, which runs logged it, and any dead letter.
  for (const f of lost) {
    const [operation] = f.split(" ");
    const projectId = expectedFailures.get(f) ?? "";
    const op = (await sim.sim.truth(projectId)).find((o) => o.id === operation);
    const history = (op?.history ?? []).map((h) => `${h.status} ${h.at}`).join(" → ");
    const seenBy = runs
      .filter((run) => run.logs.some((l) => l.operation === operation))
      .map((run) => run.n);
    const dead = (final.get(projectId)?.deadLetters ?? [])
      .filter((d) => d.alert.operationId === operation)
      .map((d) => d.reason);
    problems.push(
      `failure never delivered: ${projectId} ${f} (${op?.action ?? "?"}: ${history}); ` +
        `logged by runs [${seenBy.join(", ")}]; dead letters [${dead.join(", ")}]`,
    );
  }
  problems.push(
    ...forNoFailure.map((f) => `failure alert delivered for no failure of the truth: ${f}`),
    ...underSeveralIds.map(
      ([f, ids]) => `failure ${f} delivered under ${ids.size} alert ids: ${[...ids].join(", ")}`,
    ),
  );
  let repeats = 0;
  let repeatedAlerts = 0;
  let repeatsSameKey = 0;
  let repeatsBySameReplica = 0;
  const repeatLog: ReplicaRouteResults["repeatLog"][number][] = [];
  for (const [id, requests] of got.deliveries) {
    const [first, ...again] = requests;
    if (first === undefined || again.length === 0) continue;
    repeatedAlerts += 1;
    const lastAt = requests.at(-1)?.receivedAtMs ?? first.receivedAtMs;
    repeatLog.push({
      alert: id,
      kind: webhookAlerts(first).find((a) => a.id === id)?.kind ?? "?",
      deliveries: requests.length,
      by: requests.map(senderOf).join(" "),
      atSeconds: (first.receivedAtMs - trafficFromMs) / 1000,
      overSeconds: (lastAt - first.receivedAtMs) / 1000,
      during: faults
        .filter((f) => f.fromMs <= lastAt && f.toMs >= first.receivedAtMs)
        .map((f) => `${f.kind}${f.target === undefined ? "" : ` ${f.target}`}`),
    });
    for (const request of again) {
      repeats += 1;
      if (keyOf(request) === keyOf(first)) repeatsSameKey += 1;
      else {
        const batch = (r: ReceivedRequest) =>
          webhookAlerts(r)
            .map((a) => `${a.id.slice(0, 8)} ${a.kind} ${a.status}`)
            .join(", ");
        problems.push(
          `alert ${id} repeated under another Idempotency-Key: first by ${senderOf(first)} ` +
            `(request ${first.index}: ${batch(first)}), again by ${senderOf(request)} ` +
            `(request ${request.index}: ${batch(request)})`,
        );
      }
      if (senderOf(request) === senderOf(first)) repeatsBySameReplica += 1;
    }
  }
  const withoutKey = hook.requests.filter((r) => keyOf(r) === undefined).length;
  if (withoutKey > 0) problems.push(`${withoutKey} webhook requests had no Idempotency-Key`);

  // The replicas: no crash, nothing but log lines, no fatal line.
  problems.push(...runs.flatMap(otherOutputProblems));
  const errorsLogged: Record<string, number> = {};
  for (const run of runs) {
    for (const line of run.logs) {
      if (line.level === "fatal")
        problems.push(`run ${run.n} logged fatal: ${JSON.stringify(line)}`);
      if (line.level === "error" || line.level === "fatal") {
        const msg = line.msg ?? "?";
        errorsLogged[msg] = (errorsLogged[msg] ?? 0) + 1;
      }
    }
  }

  const unpolled = unpolledGaps(commitLog, projectIds, trafficFromMs, trafficToMs, faults);
  const faultCounts = Object.fromEntries(p.faults.map((k) => [k, 0])) as Record<
    ReplicaFault,
    number
  >;
  for (const f of faults) faultCounts[f.kind] += 1;
  const results: ReplicaRouteResults = {
    route,
    seconds: (performance.now() - routeT0) / 1000,
    faultSeconds: (trafficToMs - trafficFromMs) / 1000,
    projects: projectIds.length,
    runs: runs.length,
    faults: faultCounts,
    faultLog: faults.map((f) => ({
      kind: f.kind,
      ...(f.target === undefined ? {} : { target: f.target }),
      atSeconds: (f.fromMs - trafficFromMs) / 1000,
      seconds: f.ms / 1000,
      detail: f.detail,
    })),
    backendsTerminated: terminated.backends,
    rollingRestarts: rolling.restarts,
    rollingNotReadyWithin: rolling.notReadyWithin,
    arrivals,
    arrivalsMissing: missing,
    arrivalsExtra: extra,
    commits: commitLog.commits.length,
    claims: commitLog.claims.length,
    commitLogProblems: commitProblems.length,
    archivedOperations: archive.ended,
    archiveProblems: archive.problems.length,
    exportedTwice,
    exportedByNone,
    failures: expectedFailures.size,
    failureAlertsDelivered: [...expectedFailures.keys()].filter((f) => got.failures.has(f)).length,
    alertsLost: lost.length,
    failureAlertsForNoFailure: forNoFailure.length,
    failuresUnderSeveralIds: underSeveralIds.length,
    otherAlertsDelivered: got.other,
    alertsByKind: got.byKind,
    webhookRequests: hook.requests.length,
    repeatedDeliveries: repeats,
    repeatedAlerts,
    repeatsWithTheirKey: repeatsSameKey,
    repeatsBySameReplica,
    repeatLog,
    unpolled,
    catchUpSeconds,
    stoppedCleanly,
    diedByThemselves: diedByThemselves.size,
    errorsLogged,
    problems,
  };
  log(`route ${route}: done in ${results.seconds.toFixed(0)} s, ${problems.length} problems`);
  // This route's processes, servers and connections, newest first.
  for (const cleanup of cleanups.splice(routeCleanups).reverse()) {
    await cleanup().catch(() => undefined);
  }
  return results;
}

/**
 * For a look at a failure: the webhook's requests (when, from whom, the Idempotency-Key, the
 * alerts) and each run's kept log lines, as JSON lines in `dir`.
 */
async function dumpRoute(
  dir: string,
  route: Route,
  requests: readonly ReceivedRequest[],
  runs: readonly DaemonRun[],
): Promise<void> {
  await mkdir(dir, { recursive: true });
  const lines = (items: readonly unknown[]) => items.map((i) => `${JSON.stringify(i)}\n`).join("");
  await writeFile(
    path.join(dir, `${route}-webhook.jsonl`),
    lines(
      requests.map((r) => ({
        index: r.index,
        atMs: r.receivedAtMs,
        by: senderOf(r),
        key: keyOf(r),
        alerts: webhookAlerts(r).map((a) => ({
          id: a.id,
          kind: a.kind,
          operation: a.operation_id,
          status: a.status,
        })),
      })),
    ),
  );
  for (const run of runs) {
    await writeFile(path.join(dir, `${route}-run-${String(run.n)}.jsonl`), lines(run.logs));
  }
}

/** The run's process has not exited (a plain boolean: `alive` narrows). */
function running(run: DaemonRun): boolean {
  return alive(run);
}

/** Missing (truth above committed) and extra (committed above truth) arrivals, and the lines. */
function arrivalDifference(
  committed: Arrivals,
  truth: Arrivals,
): { missing: number; extra: number; total: number; lines: string[] } {
  let missing = 0;
  let extra = 0;
  const lines: string[] = [];
  for (const key of [...new Set([...Object.keys(committed), ...Object.keys(truth)])].sort()) {
    const c = committed[key] ?? 0;
    const t = truth[key] ?? 0;
    if (c === t) continue;
    if (t > c) missing += t - c;
    else extra += c - t;
    lines.push(`${key}: committed ${c}, truth ${t}`);
  }
  return { missing, extra, total: missing + extra, lines };
}

/**
 * The longest gaps between two commits of a project (every poll commits, an idle one too), by
 * the database's clock, from the start of the traffic to the end of the faults (the gap open
 * then runs to the project's next commit), overall and while each kind of fault was under way.
 */
function unpolledGaps(
  log: CommitLog,
  projectIds: readonly string[],
  fromMs: number,
  toMs: number,
  faults: readonly FaultRecord[],
): { longest: UnpolledGap | undefined; byFault: Partial<Record<ReplicaFault, UnpolledGap>> } {
  let longest: UnpolledGap | undefined;
  const byFault: Partial<Record<ReplicaFault, UnpolledGap>> = {};
  for (const project of projectIds) {
    const times = log.commits
      .filter((c) => c.project_id === project)
      .map((c) => c.at.getTime())
      .sort((a, b) => a - b);
    let previous = fromMs;
    for (const at of times) {
      if (at <= fromMs) continue;
      const gap: UnpolledGap = {
        project,
        seconds: (at - previous) / 1000,
        fromSeconds: (previous - fromMs) / 1000,
        during: faults
          .filter((f) => f.fromMs < at && f.toMs > previous)
          .map((f) => `${f.kind}${f.target === undefined ? "" : ` ${f.target}`}`),
      };
      if (gap.seconds > (longest?.seconds ?? -1)) longest = gap;
      for (const f of faults) {
        if (!(f.fromMs < at && f.toMs > previous)) continue;
        if (gap.seconds > (byFault[f.kind]?.seconds ?? -1)) byFault[f.kind] = gap;
      }
      previous = at;
      if (at > toMs) break;
    }
  }
  return { longest, byFault };
}

function keyOf(request: ReceivedRequest): string | undefined {
  const key = request.headers["idempotency-key"];
  return typeof key === "string" ? key : undefined;
}

function senderOf(request: ReceivedRequest): string {
  return request.path.split("/")[2] ?? "";
}

const stop = (signal: NodeJS.Signals) => {
  interrupted.now = true;
  log(`${signal}: cleaning up`);
  void cleanUp().finally(() => process.exit(130));
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
try {
  await main();
} catch (error) {
  // Ctrl-C: what broke as things were stopped under it is no news.
  if (!interrupted.now) throw error;
} finally {
  await cleanUp();
}
