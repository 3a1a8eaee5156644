/**
 * Scale-out end to end: three replicas of the real daemon (`node dist/cli.js run`) share the
 * projects of one simulator through one Postgres (`PGCP_STATE_URL`, leases of 3 s, the
 * operations archive on), while traffic runs and failures are scripted that a webhook must
 * receive. It runs through a real PgBouncer in transaction pooling mode, whose few server
 * connections the replicas share (directly when PgBouncer is missing, outside CI); the replica
 * soak and `replica-status.test.ts` run replicas on a direct connection. Nothing of ours is
 * mocked: the test sees the database, the receiver, `/metrics` and the logs.
 *
 *  1. The replicas split the nine projects 3/3/3; each exports exactly the projects it holds.
 *  2. One is killed with SIGKILL: its projects are held by the others within the lease time
 *     (plus a heartbeat), and continue from the committed checkpoint. A fresh replica joins,
 *     and the split is even again.
 *  3. One is frozen with SIGSTOP past its lease while its polls are in flight, its projects
 *     are claimed by the others, and it is resumed: its commits are rejected (fencing), it
 *     says so in its log and its metrics, and it takes its share again.
 *  4. The traffic stops; the replicas catch up. Then, over the whole run:
 *     - the end-state arrivals committed per project equal the simulator's truth;
 *     - every commit of a project was made under the newest lease claimed for it, by the
 *       replica that claimed it, and the commits form one unbroken sequence (a trigger the
 *       test installs logs every commit and every claim);
 *     - every expected alert was delivered, none else, and an alert was delivered twice only
 *       when its first delivery was the last request of a replica that was then killed or
 *       frozen (the window between a sink's 2xx and the outbox acknowledgement);
 *     - the archive holds every end-state operation exactly once, as it ended.
 *
 * The seed is printed; `REPLICAS_TEST_SEED=<n>` replays the choices (not the interleaving).
 * `dist/cli.js` must be built (`npm run test:pg` builds it first).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it, onTestFailed } from "vitest";
import { alertId } from "../../src/alerts/rules/rules.js";
import { webhookPayloadSchema } from "../../src/alerts/sinks/webhook-payload.js";
import { fairShare } from "../../src/leases/index.js";
import type { ProjectState } from "../../src/store/index.js";
import {
  NEVER_STUCK,
  QUICK_POLL,
  SMALL_PAGES,
  UNTHROTTLED_API,
  writeDaemonConfig,
} from "../support/daemon-config.js";
import { CLI, DaemonGroup, type DaemonProcess } from "../support/daemon-process.js";
import { labelValues, sampleValue } from "../support/exposition.js";
import { failureNotes } from "../support/failure-notes.js";
import { seededChoices } from "../support/random.js";
import { startReceiver, type ReceivedRequest, type Receiver } from "../support/receiver.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { removeDir, tempDir } from "../support/temp-dir.js";
import { sleep, waitFor } from "../support/wait.js";
import { committedArrivals, diffArrivals, truthArrivals, type Arrivals } from "../sync/support.js";
import {
  checkArchive,
  commitLogProblems,
  installCommitLog,
  readCommitLog,
  readStates,
} from "./checks.js";
import {
  createMigratedDatabase,
  describePg,
  PG_ROUTES,
  routed,
  type TestDatabase,
} from "./support.js";

const TRAFFIC_PROJECTS = 6;
const SCRIPTED_PROJECTS = 3;
const PROJECTS = TRAFFIC_PROJECTS + SCRIPTED_PROJECTS;
const LEASE_SECONDS = 3;
const LEASE_MS = LEASE_SECONDS * 1000;
const HEARTBEAT_MS = LEASE_MS / 3;
/** The scripted failures' action: the traffic never uses it, and only it is routed. */
const SCRIPTED_ACTION = "tenant_reattach";
const API_KEY = "pgcp-replicas-test-key";
const SIGNING_SECRET = "replicas-test-signing-secret";

interface Replica {
  readonly name: string;
  readonly cli: DaemonProcess;
  readonly id: string;
  readonly url: string;
  killedAt?: number;
  stoppedAt?: number;
  resumedAt?: number;
}

/** Through PgBouncer when the suite has one. */
const ROUTE = PG_ROUTES.at(-1) ?? "direct";

describePg("three replicas sharing one Postgres (" + ROUTE + ")", () => {
  const route = ROUTE;
  let db: TestDatabase;
  let sim: TestSimulator;
  let hook: Receiver;
  let dir: string;
  const daemons = new DaemonGroup();
  const choices = seededChoices("REPLICAS_TEST_SEED");
  const { seed, random, between } = choices;

  beforeAll(async () => {
    dir = await tempDir("pgcp-replicas-");
    // Migrate first, then log every committed state write and every claim.
    db = await createMigratedDatabase("pgcp_replicas");
    await installCommitLog(db);
    sim = await startTestSimulator({
      startTime: new Date(),
      apiKey: API_KEY,
      traffic: {
        projects: TRAFFIC_PROJECTS,
        operationsPerMinute: 40,
        failureShare: 0.15,
        retryShare: 0.5,
        slowShare: 0.05,
        cancellationShare: 0.05,
        seed,
      },
    });
    hook = await startReceiver();
  });

  afterAll(async () => {
    await daemons.killAll();
    await hook.close();
    await sim.close();
    await db.drop();
    await removeDir(dir);
  });

  it(
    "polls each project on exactly one replica, moves projects of dead and frozen replicas, and counts, alerts and archives exactly",
    { timeout: 170_000 },
    async () => {
      expect(existsSync(CLI), `${CLI} is missing: run npm run build first`).toBe(true);
      const note = failureNotes();
      note(choices.replayLine("replicas test"));
      const since = new Date(sim.simulator.now().getTime() - 1000).toISOString();

      // Projects for the scripted failures (no traffic of their own).
      const scriptedProjects: { projectId: string; branchId: string }[] = [];
      for (let i = 0; i < SCRIPTED_PROJECTS; i++) {
        const created = await sim.sim.createProject({ plan: "paid", availability_checks: false });
        scriptedProjects.push({
          projectId: created.project.id,
          branchId: created.branches[0]!.id,
        });
      }
      const projectIds = await sim.projectIds();
      expect(projectIds).toHaveLength(PROJECTS);

      const configFile = path.join(dir, "config.yaml");
      await writeDaemonConfig(configFile, {
        api: { url: sim.apiUrl, ...UNTHROTTLED_API, maxAttempts: 1, timeout: 5 },
        projects: "all",
        discoveryInterval: 2,
        state: {
          dir: path.join(dir, "unused"),
          url: routed(db.url, route),
          leaseDuration: LEASE_SECONDS,
        },
        history: "postgres",
        poll: { ...QUICK_POLL, jitter: 0, ...SMALL_PAGES, maxPagesPerPoll: 3 },
        stuck: NEVER_STUCK,
        alerts: { recovered: false },
        sinks: [
          {
            name: "hook",
            kind: "webhook",
            groupWindow: 0.2,
            maxBatch: 3,
            timeout: 2,
            match: [{ actions: [SCRIPTED_ACTION] }],
          },
        ],
      });

      const replicas: Replica[] = [];
      onTestFailed(() => {
        for (const r of replicas) {
          const lines = r.cli.logs
            .filter((l) => l.level !== "debug" && l.level !== 20)
            .slice(-40)
            .map((l) => JSON.stringify(l));
          console.log(`--- ${r.name} (${r.id}), last lines:\n${lines.join("\n")}`);
        }
      });
      const launch = async (name: string): Promise<Replica> => {
        const cli = daemons.spawn(configFile, {
          env: {
            PGCP_API_KEY: API_KEY,
            // Each replica posts to its own path: the receiver can tell who sent what.
            PGCP_WEBHOOK_URL: `${hook.url}/hook/${name}`,
            PGCP_WEBHOOK_SECRET: SIGNING_SECRET,
          },
        });
        const started = await cli.startedOrExit;
        expect(started, `${name} exited before it started:\n${cli.text()}`).toBeDefined();
        const replica: Replica = {
          name,
          cli,
          id: String(started?.replica),
          url: await cli.url,
        };
        replicas.push(replica);
        return replica;
      };

      // --- what the database says ----------------------------------------------------------
      const liveHolders = async () => {
        const rows = await db.query<{ project_id: string; holder: string | null }>(
          "SELECT project_id, holder FROM pgcp_leases WHERE expires_at > now()",
        );
        return new Map(rows.map((r) => [r.project_id, r.holder]));
      };
      const heldBy = async (replica: Replica) =>
        [...(await liveHolders())]
          .filter(([, h]) => h === replica.id)
          .map(([p]) => p)
          .sort();
      const states = () => readStates(db);
      const metricsOf = async (replica: Replica) => {
        const response = await fetch(`${replica.url}/metrics`);
        return response.text();
      };

      /**
       * The live replicas split the projects evenly, each project held by one of them, and
       * each replica's /metrics shows exactly its leases and exports exactly those projects.
       */
      const settled = async (live: readonly Replica[]) => {
        const holders = await liveHolders();
        const ids = live.map((r) => r.id).sort();
        if (!projectIds.every((p) => ids.includes(holders.get(p) ?? ""))) return false;
        for (const replica of live) {
          const held = [...holders]
            .filter(([, h]) => h === replica.id)
            .map(([p]) => p)
            .sort();
          if (held.length !== fairShare(PROJECTS, ids, replica.id)) return false;
          const text = await metricsOf(replica);
          if (!sameSet(labelValues(text, "pgcp_lease_held", "project"), held)) return false;
          if (!sameSet(labelValues(text, "pgcp_project_up", "project"), held)) return false;
        }
        return true;
      };
      const settle = (live: readonly Replica[], what: string) =>
        waitFor(what, () => settled(live), 30_000, 100);

      // --- traffic ---------------------------------------------------------------------------
      const traffic = { stopped: false };
      const started = { traffic: false };
      const clockLoop = (async () => {
        // Traffic starts once every project has its first commit (below).
        while (!traffic.stopped && !started.traffic) await sleep(20);
        while (!traffic.stopped) {
          sim.simulator.advance(Math.round(between(1, 2.5) * 1000) / 1000);
          await sleep(between(50, 100));
        }
      })();
      const scripted = new Set<string>();
      const burstLoop = (async () => {
        while (!traffic.stopped && !started.traffic) await sleep(20);
        while (!traffic.stopped) {
          const p = scriptedProjects[Math.floor(random() * scriptedProjects.length)]!;
          const op = await sim.sim.scriptOperation({
            project_id: p.projectId,
            branch_id: p.branchId,
            action: SCRIPTED_ACTION,
            steps: [
              { status: "running", after_seconds: 0 },
              {
                status: random() < 0.7 ? "failed" : "error",
                after_seconds: Math.round(between(1, 3)),
                error: "pageserver unreachable",
              },
            ],
          });
          scripted.add(op.id);
          await sleep(between(150, 400));
        }
      })();

      // --- 1. three replicas -------------------------------------------------------------------
      const [r1, r2, r3] = await Promise.all([launch("r1"), launch("r2"), launch("r3")]);
      await settle([r1, r2, r3], "three replicas to split the projects 3/3/3");
      await waitFor("the first commit of every project", async () => {
        const s = await states();
        return projectIds.every((p) => s.has(p));
      });
      started.traffic = true;
      await sleep(3000);

      // --- 2. SIGKILL ------------------------------------------------------------------------
      const killedProjects = await heldBy(r1);
      expect(killedProjects.length).toBe(PROJECTS / 3);
      const r1Exit = r1.cli.stop("SIGKILL");
      r1.killedAt = Date.now();
      expect((await r1Exit).signal).toBe("SIGKILL");
      const movedAt = await waitFor(
        "the killed replica's projects to be held by the others",
        async () => {
          const holders = await liveHolders();
          const others = [r2.id, r3.id];
          return killedProjects.every((p) => others.includes(holders.get(p) ?? ""))
            ? Date.now()
            : false;
        },
        15_000,
        20,
      );
      const takeoverMs = movedAt - r1.killedAt;
      const r4 = await launch("r4");
      await settle([r2, r3, r4], "an even split again after a replica joined");
      await sleep(1500);

      // --- 3. SIGSTOP ------------------------------------------------------------------------
      // Slow reads keep polls in flight, so that the frozen replica has commits to attempt.
      await sim.sim.addFault({ route: "listOperations", kind: "latency", latency_ms: 250 });
      await sleep(600);
      const frozenProjects = await heldBy(r2);
      expect(frozenProjects.length).toBe(PROJECTS / 3);
      const frozenClaims = await db.query<{ project_id: string; token: string }>(
        "SELECT project_id, fencing_token::text AS token FROM pgcp_leases WHERE holder = $1",
        [r2.id],
      );
      r2.cli.child.kill("SIGSTOP");
      r2.stoppedAt = Date.now();
      await waitFor(
        "the frozen replica's projects to be claimed by the others",
        async () => {
          const holders = await liveHolders();
          return frozenProjects.every((p) => [r3.id, r4.id].includes(holders.get(p) ?? ""));
        },
        15_000,
        20,
      );
      const claimedAwayMs = Date.now() - r2.stoppedAt;
      // Frozen well past its lease.
      await sleep(Math.max(1000, r2.stoppedAt + LEASE_MS + 1000 - Date.now()));
      r2.cli.child.kill("SIGCONT");
      r2.resumedAt = Date.now();
      const frozenFor = r2.resumedAt - r2.stoppedAt;
      const fencedLine = await r2.cli.waitForLog(
        "the resumed replica's commits to be rejected",
        (l) => String(l.msg).includes("rejected: this replica no longer holds the project's lease"),
      );
      await sim.sim.clearFaults();
      await settle([r2, r3, r4], "the resumed replica to take its share again");
      const resumedMetrics = await metricsOf(r2);
      await sleep(1500);

      // --- 4. the end ------------------------------------------------------------------------
      traffic.stopped = true;
      await Promise.all([clockLoop, burstLoop]);
      // Every scripted operation reaches its end; then the truth is frozen.
      await sim.sim.advance(10);
      const truth = new Map<string, Arrivals>();
      for (const id of projectIds) truth.set(id, await truthArrivals(sim, id, since));
      const expectedAlerts = new Set<string>();
      for (const p of scriptedProjects) {
        for (const op of await sim.sim.truth(p.projectId)) {
          if (!scripted.has(op.id)) continue;
          for (const h of op.history) {
            if (h.status !== "failed" && h.status !== "error") continue;
            expectedAlerts.add(
              alertId("operation_failed", {
                projectId: p.projectId,
                id: op.id,
                status: h.status,
                failuresCount: h.failures_count,
              }),
            );
          }
        }
      }
      expect(expectedAlerts.size).toBe(scripted.size);

      const differences = (s: Map<string, ProjectState>) =>
        projectIds.flatMap((id) =>
          diffArrivals(id, committedArrivals(s.get(id)), truth.get(id) ?? {}),
        );
      const delivered = () => new Set(hook.requests.flatMap((r) => alertsOf(r).map((a) => a.id)));
      await waitFor(
        "the replicas to catch up with the truth and deliver every alert",
        async () => {
          const s = await states();
          return (
            differences(s).length === 0 &&
            projectIds.every(
              (id) => s.get(id)?.segment === null && s.get(id)?.outbox.length === 0,
            ) &&
            [...expectedAlerts].every((id) => delivered().has(id))
          );
        },
        45_000,
        200,
      );
      // A late double count or a late alert would show in the next commits.
      await sleep(2500);
      const final = await states();
      const live = [r2, r3, r4];
      const exits = live.map((replica) => replica.cli.stop("SIGTERM"));
      for (const [i, replica] of live.entries()) {
        expect(
          await exits[i],
          `${replica.name} did not stop cleanly:\n${replica.cli.text().slice(-3000)}`,
        ).toEqual({ code: 0, signal: null });
      }

      // --- the accounting --------------------------------------------------------------------
      // Exactly the truth's arrivals, project by project.
      const diff = differences(final);
      expect(diff, `committed arrivals differ from the truth:\n${diff.join("\n")}`).toEqual([]);

      // Every commit under the newest claim of its project, by the replica that claimed it; the
      // commits of a project form one unbroken sequence (none lost, none made twice).
      const commitLog = await readCommitLog(db);
      const { commits, claims } = commitLog;
      const problems = commitLogProblems(projectIds, commitLog);
      expect(problems, problems.join("\n")).toEqual([]);
      // The killed replica's projects went on from its last commit (the sequence is unbroken,
      // checked above) under the others' claims.
      for (const p of killedProjects) {
        expect(commits.some((c) => c.project_id === p && c.committed_by !== r1.id)).toBe(true);
      }
      // Nothing the frozen replica attempted under its old claims was written after it froze.
      const oldTokens = new Map(frozenClaims.map((c) => [c.project_id, Number(c.token)]));
      const late = commits.filter(
        (c) =>
          c.committed_by === r2.id &&
          c.at.getTime() > (r2.stoppedAt ?? 0) &&
          oldTokens.get(c.project_id) === c.token,
      );
      expect(late).toEqual([]);
      // ... and it said so: in its log and in its metrics.
      expect(fencedLine.level).toBe("warn");
      expect(sampleValue(resumedMetrics, "pgcp_lease_fenced_commits_total")).toBeGreaterThan(0);
      expect(
        (sampleValue(resumedMetrics, "pgcp_lease_losses_total", { reason: "taken" }) ?? 0) +
          (sampleValue(resumedMetrics, "pgcp_lease_losses_total", { reason: "fenced" }) ?? 0),
      ).toBeGreaterThan(0);

      // Alerts: nothing lost, nothing invented, duplicates only from a killed or frozen
      // replica's last request before the kill or freeze.
      const windowRequests = new Set<number>();
      for (const replica of [r1, r2]) {
        const cut = replica.killedAt ?? replica.stoppedAt ?? 0;
        const sent = hook.requests.filter(
          (r) => senderOf(r) === replica.name && r.receivedAtMs <= cut + 100,
        );
        const lastBefore = sent.at(-1);
        if (lastBefore !== undefined) windowRequests.add(lastBefore.index);
      }
      const deliveries = new Map<string, ReceivedRequest[]>();
      for (const request of hook.requests) {
        for (const alert of alertsOf(request)) {
          deliveries.set(alert.id, [...(deliveries.get(alert.id) ?? []), request]);
        }
      }
      expect([...expectedAlerts].filter((id) => !deliveries.has(id))).toEqual([]);
      expect([...deliveries.keys()].filter((id) => !expectedAlerts.has(id))).toEqual([]);
      let duplicates = 0;
      const outOfWindow: string[] = [];
      for (const [id, requests] of deliveries) {
        duplicates += requests.length - 1;
        for (const request of requests.slice(0, -1)) {
          if (!windowRequests.has(request.index)) {
            outOfWindow.push(
              `alert ${id}: delivered by ${senderOf(request)} (request ${request.index}) and again by ${requests
                .slice(1)
                .map((r) => `${senderOf(r)} (request ${r.index})`)
                .join(", ")}`,
            );
          }
        }
      }
      expect(outOfWindow, outOfWindow.join("\n")).toEqual([]);

      // The archive: every operation that is in an end status, once, as it ended.
      const archive = await checkArchive(db, sim, projectIds);
      expect(archive.problems, archive.problems.join("\n")).toEqual([]);

      // The replicas released their leases when they stopped.
      const stillHeld = await db.query(
        "SELECT project_id FROM pgcp_leases WHERE holder IS NOT NULL",
      );
      expect(stillHeld).toEqual([]);

      // No replica logged an error, except the frozen one about what it attempted on waking up.
      const errors = replicas.flatMap((r) =>
        r.cli.logs
          .filter((l) => l.level === "error" || l.level === "fatal")
          // The log's time is ISO 8601, of the wall clock (as `resumedAt`).
          .filter((l) => !(r === r2 && Date.parse(String(l.time)) >= (r2.resumedAt ?? 0) - 1000))
          .map((l) => `${r.name}: ${JSON.stringify(l)}`),
      );
      expect(errors, errors.join("\n")).toEqual([]);

      let arrivals = 0;
      for (const a of truth.values()) for (const n of Object.values(a)) arrivals += n;
      note(
        [
          `${arrivals} end-state arrivals over ${PROJECTS} projects, ${archive.ended} operations archived, ` +
            `${commits.length} commits, ${claims.length} claims`,
          `SIGKILL: ${killedProjects.length} projects held by the others after ${takeoverMs} ms (lease ${LEASE_MS} ms)`,
          `SIGSTOP: frozen ${frozenFor} ms, its projects claimed after ${claimedAwayMs} ms; ` +
            `fenced commits ${String(sampleValue(resumedMetrics, "pgcp_lease_fenced_commits_total"))}`,
          `alerts: ${expectedAlerts.size} expected, ${hook.requests.length} requests, ${duplicates} duplicate deliveries ` +
            `(window requests: ${[...windowRequests].join(", ") || "none"})`,
        ].join("\n"),
      );
      expect(takeoverMs).toBeLessThan(LEASE_MS + 2 * HEARTBEAT_MS + 500);
      expect(frozenFor).toBeGreaterThan(LEASE_MS);
    },
  );
});

function senderOf(request: ReceivedRequest): string {
  return request.path.split("/")[2] ?? "";
}

function alertsOf(request: ReceivedRequest): { id: string }[] {
  if ((request.json ?? undefined) === undefined) return [];
  return webhookPayloadSchema.parse(request.json).alerts;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const x = [...new Set(a)].sort();
  const y = [...new Set(b)].sort();
  return x.length === y.length && x.every((v, i) => v === y[i]);
}
