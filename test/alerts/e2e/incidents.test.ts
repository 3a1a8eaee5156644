/**
 * A platform incident end to end, with the real daemon (`node dist/cli.js run`) and the
 * simulator's `failed_operations` fault: `start_compute` fails in one region across 30 projects
 * over several rounds, while other failures happen in another region and of another action, and
 * the daemon is killed with SIGKILL in the middle (the failures of the second round happen while
 * it is down). Slack and the webhook are local receivers that follow their documented contracts
 * (test/support/receiver.ts), PagerDuty the stand-in for its Events API v2
 * (test/support/pagerduty-receiver.ts): none of those services can run here.
 *
 * Each sink must get the incident once (Slack: one message when it opens and one when it
 * resolves; PagerDuty: one incident, triggered, updated and resolved under one dedup key; the
 * webhook: one opening, updates and one resolution, all with one `incident_id`), the failures
 * before it formed on their own, the unrelated failures on their own, and none of the failures
 * that joined it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonGroup, type DaemonProcess } from "../../support/daemon-process.js";
import {
  startPagerDutyReceiver,
  type PagerDutyReceiver,
} from "../../support/pagerduty-receiver.js";
import type { ReceivedRequest } from "../../support/receiver.js";
import type { TestSimulator } from "../../support/simulator.js";
import { readStateFiles } from "../../support/state-files.js";
import { alertSuite } from "./alert-suite.js";
import {
  createProject,
  expectedFailureAlerts,
  scriptFailure,
  SECRETS,
  sinkEnvironment,
  waitFor,
  webhookBody,
  writeAlertDaemonConfig,
  type ScriptedReceiver,
  type SimProject,
} from "./support.js";

const REGION = "aws-eu-central-1";
const ERROR = "safekeeper quorum not reached for endpoint {endpoint_id} (sk-{n})";
const ROUTING_KEY = "PDINCIDENTROUTINGKEY0123456789ab";
/** The incident's window: long enough for a restart, short enough to wait for its resolution. */
const WINDOW_SECONDS = 15;

describe("a platform incident across 30 projects, through a SIGKILL", () => {
  let sim: TestSimulator;
  let slack: ScriptedReceiver;
  let hook: ScriptedReceiver;
  let others: SimProject[];
  let dir: string;
  let pd: PagerDutyReceiver;
  const failing: SimProject[] = [];
  const daemons = new DaemonGroup();

  alertSuite(
    { receivers: ["slack", "hook"], projects: 2, tempPrefix: "pgcp-incidents-e2e-" },
    (s) => ({ sim, slack, hook, projects: others, stateDir: dir } = s),
  );
  beforeAll(async () => {
    pd = await startPagerDutyReceiver();
    for (let i = 0; i < 30; i++) failing.push(await createProject(sim, REGION));
    // Every compute starts, then suspends when idle: a connection starts it again.
    await sim.sim.advance(310);
  });
  afterAll(async () => {
    await daemons.killAll();
    await pd.close();
  });

  it(
    "pages each sink once for the incident, and on their own for the failures outside it",
    { timeout: 120_000 },
    async () => {
      const all = [...others, ...failing];
      const { configFile, stateDir } = await writeAlertDaemonConfig(dir, sim, all, {
        sinks: [
          { name: "slack", kind: "slack", groupWindow: 0.2 },
          { name: "hook", kind: "webhook", groupWindow: 0.2 },
          { name: "oncall", kind: "pagerduty", url: pd.url, groupWindow: 0.2 },
        ],
        incidents: { window: `${WINDOW_SECONDS}s`, minProjects: 5 },
      });
      const env = {
        PGCP_API_KEY: SECRETS.apiKey,
        PGCP_PAGERDUTY_ROUTING_KEY: ROUTING_KEY,
        ...sinkEnvironment(slack.url, hook.url),
      };
      const launch = async (): Promise<DaemonProcess> => {
        const cli = daemons.spawn(configFile, { env });
        await cli.startedOrExit;
        expect(cli.child.exitCode, `the daemon exited:\n${cli.tail()}`).toBeNull();
        return cli;
      };
      /** Starts the computes of `projects`; each start fails two seconds on. */
      const startComputes = async (projects: readonly SimProject[]) => {
        for (const p of projects) await sim.sim.connect(p.endpointId);
        await sim.sim.advance(3);
      };
      const incidentAlerts = () =>
        hook
          .delivered()
          .flatMap((r) => webhookBody(r).alerts)
          .filter((a) => a.kind === "platform_incident");

      // Every project polled and described (its region is what groups its failures).
      let run = await launch();
      const metricsUrl = new URL("metrics", await run.url);
      await waitFor("every project's region", async () => {
        const text = await (await fetch(metricsUrl)).text();
        return text.match(new RegExp(`pgcp_project_info\\{[^}]*region_id="${REGION}"`, "g"))
          ?.length === failing.length
          ? true
          : undefined;
      });

      // Round 1: twelve projects fail, and two failures elsewhere: an apply_config, and a
      // start_compute in another region.
      await sim.sim.addFault({
        kind: "failed_operations",
        action: "start_compute",
        region_id: REGION,
        error: ERROR,
      });
      const unrelated = [
        await scriptFailure(sim, others[0]!, "compute node unreachable"),
        await sim.sim.scriptOperation({
          project_id: others[1]!.projectId,
          branch_id: others[1]!.branchId,
          endpoint_id: others[1]!.endpointId,
          action: "start_compute",
          steps: [
            { status: "running", after_seconds: 0 },
            { status: "failed", after_seconds: 1, error: ERROR.replace("{endpoint_id}", "x") },
          ],
        }),
      ];
      await startComputes(failing.slice(0, 12));
      await waitFor("the incident's opening on every sink", () =>
        incidentAlerts().some((a) => a.incident?.state === "opened") &&
        pd.incidents.some((i) => i.dedupKey.startsWith("pgcp-incident-")) &&
        slack.delivered().some((r) => slackText(r).startsWith("pgcp-exporter: Platform incident:"))
          ? true
          : undefined,
      );
      // Killed once nothing is waiting to be sent: what follows must not be a duplicate of it.
      await waitFor("an empty outbox", async () =>
        [...(await readStateFiles(stateDir)).values()].every((s) => s.outbox.length === 0)
          ? true
          : undefined,
      );
      expect((await run.stop("SIGKILL")).signal).toBe("SIGKILL");

      // Round 2, while the daemon is down; round 3 once it is back.
      await startComputes(failing.slice(12, 22));
      run = await launch();
      await startComputes(failing.slice(22));

      const incidentId = incidentAlerts()[0]?.incident?.incident_id;
      await waitFor("all 30 projects in the incident", () =>
        incidentAlerts().some((a) => a.incident?.project_count === 30) ? true : undefined,
      );
      await sim.sim.clearFaults();
      await waitFor(
        "the incident's resolution on every sink",
        () =>
          incidentAlerts().some((a) => a.incident?.state === "resolved") &&
          pd.incidents.every((i) => i.status === "resolved" || !i.dedupKey.includes(incidentId!)) &&
          slack.delivered().some((r) => slackText(r).includes("Platform incident resolved"))
            ? true
            : undefined,
        (WINDOW_SECONDS + 30) * 1000,
      );
      await waitFor("an empty outbox", async () =>
        [...(await readStateFiles(stateDir)).values()].every((s) => s.outbox.length === 0)
          ? true
          : undefined,
      );

      // The webhook: one incident id throughout, opened once, resolved once, all 30 projects.
      const told = incidentAlerts();
      expect(new Set(told.map((a) => a.incident?.incident_id))).toEqual(new Set([incidentId]));
      const byState = (state: string) =>
        new Set(told.filter((a) => a.incident?.state === state).map((a) => a.id));
      expect(byState("opened").size).toBe(1);
      expect(byState("resolved").size).toBe(1);
      const resolved = told.find((a) => a.incident?.state === "resolved")!;
      expect(resolved.incident?.project_count).toBe(30);
      expect(new Set(resolved.incident?.projects.map((p) => p.project_id))).toEqual(
        new Set(failing.map((p) => p.projectId)),
      );
      expect(resolved.action).toBe("start_compute");
      expect(resolved.incident?.region_id).toBe(REGION);
      expect(resolved.incident?.error_class).toBe(
        "safekeeper quorum not reached for endpoint <id> (<id>)",
      );

      // PagerDuty: one incident for it, triggered, updated, resolved.
      const paged = pd.incidentsFor(`pgcp-incident-${incidentId!}`);
      expect(paged).toHaveLength(1);
      expect(paged[0]?.status).toBe("resolved");
      expect(paged[0]?.events.at(-1)?.event_action).toBe("resolve");

      // Slack: one message when it opened, one when it resolved.
      const slackTexts = slack.delivered().map(slackText);
      expect(
        slackTexts.filter((t) => t.startsWith("pgcp-exporter: Platform incident:")),
      ).toHaveLength(1);
      expect(slackTexts.filter((t) => t.includes("Platform incident resolved"))).toHaveLength(1);

      // The projects' own failures: the four before the incident formed went out on their own,
      // to every sink; the 26 that joined it went nowhere. The unrelated ones went everywhere.
      const failingIds = new Set(failing.map((p) => p.projectId));
      const failureAlerts = (
        await Promise.all(failing.map((p) => expectedFailureAlerts(sim, p.projectId, () => true)))
      ).flat();
      expect(failureAlerts).toHaveLength(30);
      const webhookFailures = new Set(
        hook
          .delivered()
          .flatMap((r) => webhookBody(r).alerts)
          .filter((a) => a.kind === "operation_failed" && failingIds.has(a.project_id))
          .map((a) => a.id),
      );
      expect(webhookFailures.size).toBe(4);
      const pagedFailures = pd.incidents.filter((i) =>
        failureAlerts.some((a) => a.id === i.dedupKey),
      );
      expect(pagedFailures.map((i) => i.dedupKey).sort()).toEqual([...webhookFailures].sort());
      const slackFailures = slack
        .delivered()
        .map(slackText)
        .filter((t) => failing.some((p) => t.includes(p.projectId)) && !t.includes("Platform"));
      expect(slackFailures).toHaveLength(4);

      for (const [i, op] of unrelated.entries()) {
        const project = others[i]!;
        const [alert] = await expectedFailureAlerts(sim, project.projectId, (id) => id === op.id);
        expect(
          hook.delivered().some((r) => webhookBody(r).alerts.some((a) => a.id === alert!.id)),
        ).toBe(true);
        expect(pd.incidentsFor(alert!.id)).toHaveLength(1);
        expect(slack.delivered().some((r) => slackText(r).includes(project.projectId))).toBe(true);
      }
      await run.stop("SIGTERM");
    },
  );
});

/** A Slack message's fallback text. */
function slackText(request: ReceivedRequest): string {
  const text = (request.json as { text?: unknown }).text;
  return typeof text === "string" ? text : "";
}
