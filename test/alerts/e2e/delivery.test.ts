/**
 * A failed operation reaches a person once, readable at a glance. The whole exporter runs
 * in-process against the simulator, with a Slack sink and a signed webhook sink pointed at two
 * local receivers over real HTTP. One operation fails after the exporter's first poll: exactly
 * one Slack message and one webhook call arrive, carrying the operation's details as the
 * simulator's truth has them, and the webhook's signature verifies as docs/webhook.md says.
 * The operation is then retried and finishes: exactly one recovery notice follows on each sink,
 * naming the failure it resolves. Nothing else arrives, however many polls follow.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { alertId } from "../../../src/alerts/rules/rules.js";
import type { TestSimulator } from "../../support/simulator.js";
import { loadDocsExample, verifyAsDocumented, type VerifyFn } from "../sinks/signature-example.js";
import { alertExporterSuite } from "./alert-suite.js";
import {
  expectedIdempotencyKey,
  sampleValue,
  secretsIn,
  SECRETS,
  slackView,
  waitFor,
  waitForCommits,
  webhookBody,
  type AlertExporter,
  type ScriptedReceiver,
  type SimProject,
} from "./support.js";

/** Untrusted text from the control plane, with mrkdwn's three special characters. */
const ERROR_TEXT = "pageserver unreachable: <timeout> & retrying";

describe("one failed operation, end to end", () => {
  let sim: TestSimulator;
  let slack: ScriptedReceiver;
  let hook: ScriptedReceiver;
  let exporter: AlertExporter;
  let project: SimProject;
  let docsVerify: VerifyFn;

  beforeAll(async () => {
    docsVerify = await loadDocsExample();
  });
  alertExporterSuite(
    {
      layers: () => [
        {
          sinks: [
            { name: "slack", kind: "slack", groupWindow: 0.2 },
            {
              name: "hook",
              kind: "webhook",
              groupWindow: 0.2,
              headers: { Authorization: SECRETS.authorization },
            },
          ],
        },
      ],
    },
    (s) => ({ sim, slack, hook, exporter, project } = s),
  );

  it("sends one Slack message and one signed webhook call, then one recovery notice each", async () => {
    const { projectId, branchId, endpointId } = project;
    const op = await sim.sim.scriptOperation({
      project_id: projectId,
      branch_id: branchId,
      endpoint_id: endpointId,
      action: "apply_config",
      steps: [
        { status: "running", after_seconds: 0 },
        { status: "failed", after_seconds: 2, error: ERROR_TEXT },
        { status: "running", after_seconds: 30 },
        { status: "finished", after_seconds: 35 },
      ],
    });
    await sim.sim.advance(3);
    const failed = (await sim.sim.truth(projectId)).find((o) => o.id === op.id)!;
    expect(failed.status).toBe("failed");
    const failureId = alertId("operation_failed", {
      projectId,
      id: op.id,
      status: "failed",
      failuresCount: 1,
    });

    await waitFor(
      "the failure on both sinks",
      () => slack.requests.length >= 1 && hook.requests.length >= 1,
    );
    await waitFor("the outbox to drain", () => exporter.state(projectId)?.outbox.length === 0);
    // Several more polls: nothing else is sent for the same failure.
    await waitForCommits(exporter, projectId, 2);
    expect(slack.requests).toHaveLength(1);
    expect(hook.requests).toHaveLength(1);

    // --- the webhook call ---
    const call = hook.requests[0]!;
    expect(call.method).toBe("POST");
    expect(call.path).toBe(SECRETS.hookPath);
    expect(call.headers["content-type"]).toBe("application/json");
    expect(call.headers["user-agent"]).toMatch(/^pgcp-exporter\/\d+\.\d+\.\d+/);
    expect(call.headers.authorization).toBe(SECRETS.authorization);
    // The signature verifies with the documented code, as received, and only with the secret.
    expect(docsVerify(SECRETS.signing, call.headers, call.rawBody)).toBe(true);
    expect(verifyAsDocumented(SECRETS.signing, call.headers, call.rawBody)).toBe(true);
    expect(docsVerify("another-secret", call.headers, call.rawBody)).toBe(false);
    const tampered = Buffer.from(call.text.replace(`"failures_count":1`, `"failures_count":2`));
    expect(docsVerify(SECRETS.signing, call.headers, tampered)).toBe(false);

    const payload = webhookBody(call);
    expect(payload.version).toBe(1);
    expect(payload.group_key).toBe(projectId);
    expect(Math.floor(Date.parse(payload.sent_at) / 1000)).toBe(
      Number(call.headers["x-pgcp-timestamp"]),
    );
    expect(payload.alerts).toHaveLength(1);
    const alert = payload.alerts[0]!;
    expect(alert).toEqual({
      id: failureId,
      kind: "operation_failed",
      project_id: projectId,
      // Named as the API names them: a project created without a name after its id; the
      // endpoint has no name, so none is sent.
      project_name: projectId,
      operation_id: op.id,
      branch_id: branchId,
      branch_name: "main",
      endpoint_id: endpointId,
      action: "apply_config",
      status: "failed",
      failures_count: 1,
      error: ERROR_TEXT,
      created_at: new Date(failed.created_at).toISOString(),
      updated_at: new Date(failed.updated_at).toISOString(),
      duration_seconds: (failed.total_duration_ms ?? Number.NaN) / 1000,
      detected_at: alert.detected_at,
      link: `https://console.example.test/projects/${projectId}/operations/${op.id}`,
      resolves: null,
      also_resolves: [],
      advice: null,
      incident: null,
    });
    expect(Date.parse(alert.detected_at)).toBeLessThanOrEqual(Date.parse(payload.sent_at));
    expect(call.headers["idempotency-key"]).toBe(expectedIdempotencyKey([failureId]));

    // --- the Slack message ---
    const message = slack.requests[0]!;
    expect(message.path).toBe(SECRETS.slackPath);
    expect(message.headers["content-type"]).toMatch(/^application\/json/);
    const view = slackView(message);
    expect(view.header).toBe(`:red_circle: 1 alert in project ${projectId}`);
    expect(view.count).toBe(1);
    expect(view.raw.unfurl_links).toBe(false);
    expect(view.sections).toHaveLength(1);
    const section = view.sections[0]!;
    expect(section).toContain("*Operation failed* · `apply_config` · status `failed` · 1 failure");
    expect(section).toContain(
      `branch main \`${branchId}\` · endpoint \`${endpointId}\` · operation \`${op.id}\``,
    );
    expect(section).toContain(
      `<https://console.example.test/projects/${projectId}/operations/${op.id}|Open in console>`,
    );
    // The error is quoted, escaped for mrkdwn.
    expect(section).toContain("```pageserver unreachable: &lt;timeout&gt; &amp; retrying```");
    expect(view.text).toBe(
      `pgcp-exporter: 1 alert in project ${projectId} (1 failed)\n` +
        `• Operation failed: apply_config (failed) on ${endpointId}`,
    );

    // --- the recovery ---
    await sim.sim.advance(35);
    const finished = (await sim.sim.truth(projectId)).find((o) => o.id === op.id)!;
    expect(finished.status).toBe("finished");
    await waitFor(
      "the recovery on both sinks",
      () => slack.requests.length >= 2 && hook.requests.length >= 2,
    );
    await waitFor("the outbox to drain", () => exporter.state(projectId)?.outbox.length === 0);
    await waitForCommits(exporter, projectId, 2);
    expect(slack.requests).toHaveLength(2);
    expect(hook.requests).toHaveLength(2);

    const recoveryCall = hook.requests[1]!;
    expect(docsVerify(SECRETS.signing, recoveryCall.headers, recoveryCall.rawBody)).toBe(true);
    const recovery = webhookBody(recoveryCall).alerts;
    expect(recovery).toHaveLength(1);
    expect(recovery[0]).toMatchObject({
      id: alertId("operation_recovered", {
        projectId,
        id: op.id,
        status: "finished",
        failuresCount: 1,
      }),
      kind: "operation_recovered",
      operation_id: op.id,
      status: "finished",
      failures_count: 1,
      error: null,
      resolves: failureId,
      updated_at: new Date(finished.updated_at).toISOString(),
    });
    const recoveryView = slackView(slack.requests[1]!);
    expect(recoveryView.header).toBe(`:white_check_mark: 1 alert in project ${projectId}`);
    expect(recoveryView.sections[0]).toContain(
      "*Operation recovered* · `apply_config` · status `finished`",
    );
    expect(recoveryView.sections[0]).toContain(`resolves alert \`${failureId}\``);
    expect(recoveryView.text).toContain(
      `Operation recovered: apply_config (finished) on ${endpointId}, resolves ${failureId}`,
    );

    // --- what the exporter says about it ---
    const metrics = await exporter.metrics();
    for (const sink of ["slack", "hook"]) {
      expect(sampleValue(metrics, "pgcp_alerts_delivered_total", { sink })).toBe(2);
      // The gauge has no series for a sink with nothing pending (see the report).
      expect(sampleValue(metrics, "pgcp_alerts_pending", { sink }) ?? 0).toBe(0);
      expect(sampleValue(metrics, "pgcp_alert_delivery_latency_seconds_count", { sink })).toBe(2);
      expect(sampleValue(metrics, "pgcp_alert_delivery_failures_total", { sink })).toBeUndefined();
    }
    expect([
      ...secretsIn("the logs", exporter.logs.text()),
      ...secretsIn("/metrics", metrics),
    ]).toEqual([]);
  });
});
