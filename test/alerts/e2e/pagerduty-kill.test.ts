/**
 * PagerDuty's dedup across `kill -9`. The real daemon (`node dist/cli.js run`) delivers to the
 * stand-in for PagerDuty's Events API v2 (test/support/pagerduty-receiver.ts); each round, the
 * stand-in takes one event (the incident changes) and sends its 202's status line, holds the
 * body back, and the daemon is killed with SIGKILL while it waits for it: between PagerDuty's
 * acceptance and the outbox's acknowledgement, the one window where at-least-once delivery
 * sends an alert twice. The next run sends that event again:
 *
 * - a trigger lands on the incident it opened (same dedup_key): still one incident, with the
 *   trigger twice in its log;
 * - a resolve finds no open incident and is dropped: the incident stays resolved, and no new one
 *   opens.
 *
 * The routing key comes from PGCP_PAGERDUTY_ROUTING_KEY (a sink's default variable) and shows
 * in no output and not in /metrics. `dist/cli.js` must be built (`npm test` builds it first).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonGroup, errorsLogged, type DaemonProcess } from "../../support/daemon-process.js";
import {
  startPagerDutyReceiver,
  type PagerDutyEventIn,
  type PagerDutyReceiver,
} from "../../support/pagerduty-receiver.js";
import type { ReceivedRequest } from "../../support/receiver.js";
import type { TestSimulator } from "../../support/simulator.js";
import { readStateFiles } from "../../support/state-files.js";
import { alertSuite } from "./alert-suite.js";
import {
  expectedFailureAlerts,
  failsAfter,
  sampleValue,
  secretsIn,
  SECRETS,
  waitFor,
  writeAlertDaemonConfig,
  type SimProject,
} from "./support.js";

const ROUTING_KEY = "PDKILLROUTINGKEYSECRET0123456789";

describe("PagerDuty delivery across kill -9", () => {
  let sim: TestSimulator;
  let pd: PagerDutyReceiver;
  let dir: string;
  let project: SimProject;
  const daemons = new DaemonGroup();

  alertSuite(
    { receivers: [], tempPrefix: "pgcp-pagerduty-kill-" },
    (s) => ({ sim, project, stateDir: dir } = s),
  );
  beforeAll(async () => {
    pd = await startPagerDutyReceiver();
  });
  afterAll(async () => {
    await daemons.killAll();
    await pd.close();
  });

  it(
    "sends an event again after a kill in the ack window, and PagerDuty's dedup keeps one incident",
    { timeout: 90_000 },
    async () => {
      const { configFile, stateDir } = await writeAlertDaemonConfig(dir, sim, [project], {
        sinks: [{ name: "oncall", kind: "pagerduty", url: pd.url, groupWindow: 0.2, timeout: 10 }],
      });
      const env = { PGCP_API_KEY: SECRETS.apiKey, PGCP_PAGERDUTY_ROUTING_KEY: ROUTING_KEY };
      const runs: DaemonProcess[] = [];
      const launch = async (): Promise<DaemonProcess> => {
        const cli = daemons.spawn(configFile, { env });
        runs.push(cli);
        await cli.startedOrExit;
        expect(cli.child.exitCode, `run ${runs.length} exited:\n${cli.text()}`).toBeNull();
        return cli;
      };

      /**
       * The next event `matches` picks is taken (the incident changes), its 202 status line sent
       * and its body held back; resolves once it has arrived.
       */
      const holdNext = (matches: (event: PagerDutyEventIn) => boolean): Promise<void> =>
        new Promise((resolve) => {
          pd.setScript((request: ReceivedRequest) => {
            const event = request.json as PagerDutyEventIn;
            if (!matches(event)) return undefined;
            pd.setScript(undefined);
            setTimeout(resolve, 20);
            return { status: 202, ingest: true, bodyDelayMs: 30_000 };
          });
        });
      const kill = async (cli: DaemonProcess) => {
        expect(cli.child.exitCode, `the run exited by itself:\n${cli.text()}`).toBeNull();
        expect((await cli.stop("SIGKILL")).signal).toBe("SIGKILL");
      };
      const failure = () =>
        sim.sim.scriptOperation({
          project_id: project.projectId,
          branch_id: project.branchId,
          action: "apply_config",
          steps: failsAfter(1, "failed", "compute node unreachable"),
        });
      const failureId = async (operationId: string) => {
        const [alert] = await expectedFailureAlerts(
          sim,
          project.projectId,
          (id) => id === operationId,
        );
        if (alert === undefined) throw new Error(`operation ${operationId} has not failed`);
        return alert.id;
      };

      // Run 1 makes the first commit (no history is replayed on a first start).
      let run = await launch();
      await waitFor("the first commit", async () =>
        (await readStateFiles(stateDir)).has(project.projectId),
      );

      // Twice: a trigger taken by PagerDuty, the daemon killed before its acknowledgement.
      const triggers: string[] = [];
      for (let round = 0; round < 2; round++) {
        const op = await failure();
        const held = holdNext(
          (e) => e.event_action === "trigger" && e.payload?.custom_details?.operation_id === op.id,
        );
        await sim.sim.advance(2);
        await held;
        triggers.push(await failureId(op.id));
        await kill(run);
        run = await launch();
      }
      await waitFor("both triggers sent again", () =>
        triggers.every((id) => pd.incidentsFor(id)[0]?.events.length === 2),
      );

      // A failure delivered, then its recovery's resolve taken, the daemon killed before its ack.
      const recovering = await sim.sim.scriptOperation({
        project_id: project.projectId,
        branch_id: project.branchId,
        action: "start_compute",
        steps: [
          { status: "running", after_seconds: 0 },
          { status: "failed", after_seconds: 1, error: "compute node unreachable" },
          { status: "running", after_seconds: 5 },
          { status: "finished", after_seconds: 6 },
        ],
      });
      await sim.sim.advance(2);
      const recoveringId = await failureId(recovering.id);
      await waitFor("the failure's incident", () => pd.incidentsFor(recoveringId)[0]);
      const resolveHeld = holdNext(
        (e) => e.event_action === "resolve" && e.dedup_key === recoveringId,
      );
      await waitFor("the failure's acknowledgement", async () => {
        const state = (await readStateFiles(stateDir)).get(project.projectId);
        return state !== undefined && !state.outbox.some((e) => e.alert.id === recoveringId);
      });
      await sim.sim.advance(5);
      await resolveHeld;
      await kill(run);
      const last = await launch();
      await waitFor(
        "the resolve sent again",
        () => pd.log.filter((l) => l.event?.event_action === "resolve").length === 2,
      );
      await waitFor("the outbox to drain", async () => {
        const state = (await readStateFiles(stateDir)).get(project.projectId);
        return state?.outbox.length === 0;
      });
      const url = await last.url;
      const metrics = await waitFor("/metrics to show nothing pending", async () => {
        const text = await (await fetch(`${url}/metrics`)).text();
        return (sampleValue(text, "pgcp_alerts_pending", { sink: "oncall" }) ?? 0) === 0 && text;
      });
      expect(
        await last.stop("SIGTERM"),
        `the last run did not stop cleanly:\n${last.text()}`,
      ).toEqual({
        code: 0,
        signal: null,
      });

      // One incident per alert: the triggers sent again landed on the incidents they opened.
      for (const id of triggers) {
        const incidents = pd.incidentsFor(id);
        expect(incidents).toHaveLength(1);
        expect(incidents[0]!.events.map((e) => e.event_action)).toEqual(["trigger", "trigger"]);
        expect(incidents[0]!.status).toBe("triggered");
      }
      // The resolve sent again was dropped: still one incident, resolved once.
      const resolved = pd.incidentsFor(recoveringId);
      expect(resolved).toHaveLength(1);
      expect(resolved[0]!.events.map((e) => e.event_action)).toEqual(["trigger", "resolve"]);
      expect(resolved[0]!.status).toBe("resolved");
      expect(pd.incidents).toHaveLength(3);
      expect(pd.log.every((l) => l.status === 202)).toBe(true);

      const problems = runs.flatMap((r, i) => errorsLogged(r, `run ${i + 1} logged`));
      expect(problems, problems.join("\n")).toEqual([]);
      expect([
        ...runs.flatMap((r, i) => secretsIn(`the output of run ${i + 1}`, r.text(), [ROUTING_KEY])),
        ...secretsIn("/metrics", metrics, [ROUTING_KEY]),
      ]).toEqual([]);
    },
  );
});
