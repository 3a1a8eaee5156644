/**
 * A flood: 500 operations of one project fail at once. People get a handful of grouped Slack
 * messages (each "50 alerts in project …", the first 20 shown and "and 30 more", within Slack's
 * block and text limits) at most one per second, not 500 notifications; the webhook gets the
 * same alerts in batches of up to 100. By the webhook's ids, every failure arrives exactly once.
 *
 * So that all 500 failures are found by one poll (and the grouping is exact), the operations are
 * created and failed while the simulator refuses the operations reads with 503, and the fault
 * is lifted afterwards: the next poll walks them all at once.
 */
import { describe, expect, it } from "vitest";
import { SLACK_LIMITS } from "../../../src/alerts/sinks/slack-message.js";
import type { TestSimulator } from "../../support/simulator.js";
import { alertExporterSuite } from "./alert-suite.js";
import {
  expectedFailureAlerts,
  failsAfter,
  sampleValue,
  secretsIn,
  slackView,
  waitFor,
  webhookBody,
  type AlertExporter,
  type ScriptedReceiver,
  type SimProject,
} from "./support.js";

const FAILURES = 500;
const SLACK_BATCH = 50;
const HOOK_BATCH = 100;

describe("a flood of failures in one project", () => {
  let sim: TestSimulator;
  let slack: ScriptedReceiver;
  let hook: ScriptedReceiver;
  let exporter: AlertExporter;
  let project: SimProject;

  alertExporterSuite(
    {
      layers: () => [
        // Failed operations are not watched for a retry: each poll stays one request.
        { poll: { watchFailed: 0 } },
        {
          sinks: [
            { name: "slack", kind: "slack", groupWindow: 1 },
            { name: "hook", kind: "webhook", groupWindow: 1 },
          ],
        },
      ],
    },
    (s) => ({ sim, slack, hook, exporter, project } = s),
  );

  it("groups 500 failures into paced Slack messages and delivers each alert once", async () => {
    const { projectId, branchId, endpointId } = project;
    await sim.sim.addFault({ route: "listOperations", kind: "status", status: 503 });
    await sim.sim.addFault({ route: "getOperation", kind: "status", status: 503 });
    const scripted = new Set<string>();
    const actions = ["apply_config", "start_compute", "suspend_compute", "create_branch"];
    for (let i = 0; i < FAILURES; i += 25) {
      const ops = await Promise.all(
        Array.from({ length: Math.min(25, FAILURES - i) }, (_, j) =>
          sim.sim.scriptOperation({
            project_id: projectId,
            branch_id: branchId,
            ...((i + j) % 2 === 0 ? { endpoint_id: endpointId } : {}),
            action: actions[(i + j) % actions.length]!,
            steps: failsAfter(
              1 + ((i + j) % 3),
              (i + j) % 5 === 0 ? "error" : "failed",
              `failure #${i + j}`,
            ),
          }),
        ),
      );
      for (const op of ops) scripted.add(op.id);
    }
    await sim.sim.advance(5);
    await sim.sim.clearFaults();

    const expected = await expectedFailureAlerts(sim, projectId, (id) => scripted.has(id));
    expect(expected).toHaveLength(FAILURES);
    const expectedIds = expected.map((e) => e.id).sort();

    const slackCount = () => slack.delivered().reduce((n, r) => n + slackView(r).count, 0);
    const hookIds = () => hook.delivered().flatMap((r) => webhookBody(r).alerts.map((a) => a.id));
    await waitFor(
      "every alert on both sinks",
      () => slackCount() >= FAILURES && hookIds().length >= FAILURES,
      40_000,
    );
    await waitFor("the outbox to drain", () => exporter.state(projectId)?.outbox.length === 0);

    // One poll found them all (one detection time).
    const detected = new Set(
      hook.requests.flatMap((r) => webhookBody(r).alerts.map((a) => a.detected_at)),
    );
    expect(detected.size).toBe(1);

    // The webhook: each alert exactly once, in full batches.
    expect(hookIds().sort()).toEqual(expectedIds);
    expect(hook.requests.map((r) => webhookBody(r).alerts.length)).toEqual(
      Array.from({ length: FAILURES / HOOK_BATCH }, () => HOOK_BATCH),
    );

    // Slack: ten grouped messages, readable at a glance, within Slack's limits.
    const views = slack.requests.map(slackView);
    expect(views.map((v) => v.count)).toEqual(
      Array.from({ length: FAILURES / SLACK_BATCH }, () => SLACK_BATCH),
    );
    for (const view of views) {
      expect(view.project).toBe(projectId);
      expect(view.header.length).toBeLessThanOrEqual(SLACK_LIMITS.maxHeaderText);
      expect(view.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.maxBlocks);
      expect(view.sections).toHaveLength(SLACK_LIMITS.maxItems);
      for (const s of view.sections)
        expect(s.length).toBeLessThanOrEqual(SLACK_LIMITS.maxSectionText);
      expect(view.text.length).toBeLessThanOrEqual(SLACK_LIMITS.maxFallbackText);
      expect(view.text).toMatch(/\nand \d+ more$/);
      const last = view.blocks.at(-1);
      expect(last?.elements?.[0]?.text).toBe(`_and ${SLACK_BATCH - SLACK_LIMITS.maxItems} more_`);
      const kinds = view.blocks[1]?.elements?.[0]?.text;
      expect(kinds).toBe(`${SLACK_BATCH} failed`);
    }
    // The items shown are distinct failures of the flood.
    const shown = views.flatMap((v) => v.operations);
    expect(new Set(shown).size).toBe(shown.length);
    for (const id of shown) expect(scripted.has(id)).toBe(true);

    // At most one message per second to the webhook, by the receiver's clock.
    const gaps = slack.requests
      .slice(1)
      .map((r, i) => r.receivedAtMs - slack.requests[i]!.receivedAtMs);
    expect(gaps.filter((g) => g < 950)).toEqual([]);

    // The outbox gauges follow the state of the latest poll commit (see outbox-gauges.test.ts).
    const metrics = await waitFor("the pending gauge to reach 0", async () => {
      const text = await exporter.metrics();
      return (sampleValue(text, "pgcp_alerts_pending", { sink: "slack" }) ?? 0) === 0 && text;
    });
    expect(sampleValue(metrics, "pgcp_alerts_delivered_total", { sink: "slack" })).toBe(FAILURES);
    expect(sampleValue(metrics, "pgcp_alerts_delivered_total", { sink: "hook" })).toBe(FAILURES);
    expect([
      ...secretsIn("the logs", exporter.logs.text()),
      ...secretsIn("/metrics", metrics),
    ]).toEqual([]);
  });
});
