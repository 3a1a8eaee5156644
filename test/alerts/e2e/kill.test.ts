/**
 * No alert is lost across `kill -9` (invariant 3, docs/design.md). The real daemon
 * (`node dist/cli.js run`) delivers to a signed webhook at a local receiver while a burst of
 * failures goes on in the simulator, and is killed with SIGKILL many times in a row: at random
 * moments after its spawn or its start, and while the receiver is answering one of its requests
 * with a 2xx (the status line is sent, the body follows a little later, so that the kill lands
 * between the receiver's 2xx and the exporter's acknowledgement). Then the burst stops and a
 * last run delivers what is left and is stopped with SIGTERM.
 *
 * Every failure of the simulator's truth must then have been delivered (answered 2xx) at least
 * once, nothing else was, and an alert delivered twice is allowed only when its first delivery
 * was the last request answered by a run that was then killed: the window between a sink's 2xx
 * and the outbox acknowledgement (the notifier sends one message at a time per sink, and
 * commits the acknowledgement before it sends the next). The duplicates are counted and printed.
 *
 * The seed is printed; `ALERT_KILL_SEED=<n>` replays the choices (not the interleaving with the
 * daemon's timers). `dist/cli.js` must be built (`npm test` builds it first).
 */
import { afterAll, describe, expect, it } from "vitest";
import { DaemonGroup, errorsLogged, type DaemonProcess } from "../../support/daemon-process.js";
import { failureNotes } from "../../support/failure-notes.js";
import { seededChoices } from "../../support/random.js";
import type { ReceivedRequest, ResponseSpec } from "../../support/receiver.js";
import type { TestSimulator } from "../../support/simulator.js";
import { readStateFiles } from "../../support/state-files.js";
import { sleep } from "../../support/wait.js";
import { verifyAsDocumented } from "../sinks/signature-example.js";
import { alertSuite } from "./alert-suite.js";
import {
  expectedFailureAlerts,
  failsAfter,
  sampleValue,
  secretsIn,
  SECRETS,
  waitFor,
  webhookBody,
  writeAlertDaemonConfig,
  type ScriptedReceiver,
  type SimProject,
} from "./support.js";

const PROJECTS = 3;
/** Runs ended by SIGKILL before the last one. */
const KILLS = 8;
/** Alerts per webhook request: small, so that there are many requests (and many windows). */
const MAX_BATCH = 3;

type KillTiming = "spawn" | "started" | "request";
const TIMINGS: readonly KillTiming[] = ["started", "request", "spawn", "request"];

interface Run {
  readonly n: number;
  readonly cli: DaemonProcess;
  readonly timing: KillTiming | "last";
  /** Index of the first receiver request of this run; `end` is one past its last. */
  readonly start: number;
  end: number;
  afterMs: number;
  killed: boolean;
}

describe("alert delivery across kill -9", () => {
  let sim: TestSimulator;
  let hook: ScriptedReceiver;
  let dir: string;
  let projects: SimProject[];
  const daemons = new DaemonGroup();

  const choices = seededChoices("ALERT_KILL_SEED");
  const { random, between } = choices;

  /** Set while a run waits to be killed during one of its requests. */
  let onRequest: ((request: ReceivedRequest) => ResponseSpec | undefined) | undefined;

  alertSuite(
    {
      receivers: ["hook"],
      scripts: {
        hook: (request) => {
          const targeted = onRequest?.(request);
          if (targeted !== undefined) return targeted;
          // Now and then a failure that echoes the request's path (with its secrets) back.
          if (random() < 0.1) {
            return {
              status: 500,
              headers: { "x-echo": request.path },
              body: `upstream failed for ${request.path}`,
            };
          }
          return { status: 200, body: "ok", bodyDelayMs: Math.floor(random() * 30) };
        },
      },
      projects: PROJECTS,
      tempPrefix: "pgcp-alerts-kill-",
    },
    (s) => ({ sim, hook, projects, stateDir: dir } = s),
  );
  afterAll(() => daemons.killAll());

  it(
    "loses no alert and duplicates only between a 2xx and its acknowledgement",
    { timeout: 120_000 },
    async () => {
      const note = failureNotes();
      note(choices.replayLine("alert kill test"));
      const { configFile, stateDir } = await writeAlertDaemonConfig(dir, sim, projects, {
        poll: { watchFailed: 0 },
        sinks: [
          { name: "hook", kind: "webhook", groupWindow: 0.2, maxBatch: MAX_BATCH, timeout: 2 },
        ],
      });
      // The secrets come from the environment only.
      const env = {
        PGCP_API_KEY: SECRETS.apiKey,
        PGCP_WEBHOOK_URL: `${hook.url}${SECRETS.hookPath}`,
        PGCP_WEBHOOK_SECRET: SECRETS.signing,
      };

      const runs: Run[] = [];
      const launch = (timing: Run["timing"]): Run => {
        const cli = daemons.spawn(configFile, { env });
        const run: Run = {
          n: runs.length + 1,
          cli,
          timing,
          start: hook.requests.length,
          end: -1,
          afterMs: 0,
          killed: false,
        };
        runs.push(run);
        return run;
      };
      const kill = async (run: Run, origin: number) => {
        run.afterMs = Date.now() - origin;
        expect(
          run.cli.child.exitCode,
          `run ${run.n} exited by itself:\n${run.cli.text()}`,
        ).toBeNull();
        expect((await run.cli.stop("SIGKILL")).signal).toBe("SIGKILL");
        run.killed = true;
        // Whatever the killed process had sent has reached the receiver by now.
        await sleep(100);
        run.end = hook.requests.length;
      };

      // The burst: failures keep coming in random projects, the clock keeps moving.
      const scripted = new Set<string>();
      const burst = { stopped: false };
      const burstLoop = async () => {
        while (!burst.stopped) {
          const p = projects[Math.floor(random() * projects.length)]!;
          const op = await sim.sim.scriptOperation({
            project_id: p.projectId,
            branch_id: p.branchId,
            ...(random() < 0.5 ? { endpoint_id: p.endpointId } : {}),
            action: random() < 0.5 ? "apply_config" : "start_compute",
            steps: failsAfter(
              Math.round(between(1, 3)),
              random() < 0.7 ? "failed" : "error",
              "compute node unreachable",
            ),
          });
          scripted.add(op.id);
          await sim.sim.advance(Math.round(between(0.5, 1.5) * 10) / 10);
          await sleep(between(60, 150));
        }
      };

      // Run 1 makes the first commit of every project (no history is replayed on a first
      // start): only then does the burst begin.
      let burstDone: Promise<void> | undefined;
      for (let k = 1; k <= KILLS; k++) {
        const timing = k === 1 ? "started" : (TIMINGS[(k - 2) % TIMINGS.length] ?? "started");
        const run = launch(timing);
        const spawnedAt = Date.now();
        if (timing === "spawn") {
          await sleep(between(100, 1500));
          await kill(run, spawnedAt);
          continue;
        }
        await run.cli.startedOrExit;
        expect(run.cli.child.exitCode, `run ${k} exited:\n${run.cli.text()}`).toBeNull();
        const startedAt = Date.now();
        if (k === 1) {
          await waitFor("the first commit of every project", async () => {
            const states = await readStateFiles(stateDir);
            return projects.every((p) => states.has(p.projectId));
          });
          burstDone = burstLoop();
        }
        if (timing === "started") {
          await sleep(between(300, 2000));
          await kill(run, startedAt);
          continue;
        }
        // Kill while the receiver answers the nth request of this run with a 2xx whose body
        // comes 100 ms after its status line: sometimes before, sometimes after the body.
        const nth = 1 + Math.floor(random() * 3);
        let seen = 0;
        const target = new Promise<void>((resolve) => {
          onRequest = () => {
            seen += 1;
            if (seen < nth) return undefined;
            onRequest = undefined;
            setTimeout(resolve, between(5, 150));
            return { status: 200, body: "ok", bodyDelayMs: 100 };
          };
        });
        await Promise.race([target, sleep(3000)]);
        onRequest = undefined;
        await kill(run, startedAt);
      }

      // The burst stops; every scripted operation reaches its end; the truth is frozen.
      burst.stopped = true;
      await burstDone;
      await sim.sim.advance(10);
      const expected = (
        await Promise.all(
          projects.map((p) => expectedFailureAlerts(sim, p.projectId, (id) => scripted.has(id))),
        )
      ).flat();
      expect(expected).toHaveLength(scripted.size);
      const expectedIds = new Set(expected.map((e) => e.id));

      const deliveredIds = () =>
        new Set(hook.delivered().flatMap((r) => webhookBody(r).alerts.map((a) => a.id)));
      const last = launch("last");
      await waitFor(
        "the last run to deliver every alert",
        () => [...expectedIds].every((id) => deliveredIds().has(id)),
        40_000,
        100,
      );
      await waitFor("the outboxes to drain", async () => {
        const states = await readStateFiles(stateDir);
        return projects.every((p) => states.get(p.projectId)?.outbox.length === 0);
      });
      // Let it poll on a while: a late duplicate would show.
      const sequences = async () =>
        [...(await readStateFiles(stateDir)).values()].reduce((sum, s) => sum + s.sequence, 0);
      const before = await sequences();
      await waitFor("more commits", async () => (await sequences()) >= before + 2 * PROJECTS);
      // The line that says where the HTTP server listens (its wording may change).
      const served = last.cli.logs.find(
        (l) => typeof l.url === "string" && String(l.msg).startsWith("serving"),
      );
      expect(served, "the last run did not log its address").toBeDefined();
      const url = String(served?.url);
      const metrics = await (await fetch(`${url}/metrics`)).text();
      expect(
        await last.cli.stop("SIGTERM"),
        `the last run did not stop cleanly:\n${last.cli.text()}`,
      ).toEqual({ code: 0, signal: null });
      last.end = hook.requests.length;

      // --- the accounting ---
      const runOf = (index: number): Run =>
        runs.find((r) => index >= r.start && index < r.end) ?? last;
      const deliveries = new Map<string, number[]>();
      for (const request of hook.delivered()) {
        for (const alert of webhookBody(request).alerts) {
          deliveries.set(alert.id, [...(deliveries.get(alert.id) ?? []), request.index]);
        }
      }
      // Nothing lost, nothing invented.
      expect([...expectedIds].filter((id) => !deliveries.has(id))).toEqual([]);
      expect([...deliveries.keys()].filter((id) => !expectedIds.has(id))).toEqual([]);
      // Duplicates only from the window between a 2xx and its acknowledgement.
      let duplicates = 0;
      const outOfWindow: string[] = [];
      for (const [id, indices] of deliveries) {
        duplicates += indices.length - 1;
        for (const index of indices.slice(0, -1)) {
          const run = runOf(index);
          if (!run.killed || index !== run.end - 1) {
            outOfWindow.push(
              `alert ${id}: delivered by request ${index} of run ${run.n} ` +
                `(requests ${run.start}..${run.end - 1}, ${run.killed ? "killed" : "not killed"}) ` +
                `and again by requests ${indices.filter((i) => i > index).join(", ")}`,
            );
          }
        }
      }
      // Every request was signed with the secret.
      for (const request of hook.requests) {
        expect(verifyAsDocumented(SECRETS.signing, request.headers, request.rawBody)).toBe(true);
      }

      const windows = runs.filter((r) => {
        if (!r.killed || r.end <= r.start) return false;
        const status = hook.statusOf(r.end - 1);
        return status !== "drop" && status >= 200 && status < 300;
      });
      note(
        [
          `${scripted.size} failures, ${expectedIds.size} alerts, ${hook.requests.length} requests ` +
            `(${hook.delivered().length} answered 2xx); ${duplicates} duplicate deliveries; ` +
            `${windows.length} of ${KILLS} kills came after a 2xx answer to the run's last request`,
          ...runs.map((r) => {
            const lastStatus = r.end > r.start ? String(hook.statusOf(r.end - 1)) : "-";
            const redelivered =
              r.end > r.start &&
              webhookBody(hook.requests[r.end - 1]!).alerts.some(
                (a) => (deliveries.get(a.id)?.length ?? 0) > 1,
              );
            return (
              `  run ${r.n} (${r.timing}): ${r.killed ? `killed ${r.afterMs} ms after ${r.timing === "spawn" ? "spawn" : "start"}` : "stopped with SIGTERM"}; ` +
              `requests ${r.end - r.start}, last answered ${lastStatus}` +
              (redelivered ? "; its last batch was delivered again" : "")
            );
          }),
        ].join("\n"),
      );
      expect(outOfWindow, outOfWindow.join("\n")).toEqual([]);

      // No run logged an error, and no output, nor /metrics, shows a secret.
      const problems = runs.flatMap((r) => errorsLogged(r.cli, `run ${r.n} logged`));
      expect(problems, problems.join("\n")).toEqual([]);
      expect([
        ...runs.flatMap((r) => secretsIn(`the output of run ${r.n}`, r.cli.text())),
        ...secretsIn("/metrics", metrics),
      ]).toEqual([]);
      expect(sampleValue(metrics, "pgcp_alerts_pending", { sink: "hook" }) ?? 0).toBe(0);
    },
  );
});
