/**
 * A sink that is down for a while loses nothing and sends nothing twice. Both receivers answer
 * the first requests with 500, 500, then 503 with `Retry-After: 1`, then 429 with
 * `Retry-After: 2`, then 200. Failures happen in two projects, before and during the outage.
 * Afterwards every alert has been delivered (answered 2xx) exactly once on each sink, each
 * attempt was signed afresh with the same idempotency key for the same alerts, the waits asked
 * for were honoured (the next attempt came at least `Retry-After` later, by the receiver's
 * clock: for the project after a 503, for the whole sink after a 429), Slack was never sent
 * two messages within a second, and the failure metrics count each refused attempt.
 */
import { describe, expect, it } from "vitest";
import type { ReceivedRequest, ResponseSpec } from "../../support/receiver.js";
import type { TestSimulator } from "../../support/simulator.js";
import { verifyAsDocumented } from "../sinks/signature-example.js";
import { alertExporterSuite } from "./alert-suite.js";
import {
  expectedFailureAlerts,
  expectedIdempotencyKey,
  sampleValue,
  scriptFailure,
  SECRETS,
  secretsIn,
  slackView,
  waitFor,
  waitForCommits,
  webhookBody,
  type AlertExporter,
  type ExpectedAlert,
  type ScriptedReceiver,
  type SimProject,
} from "./support.js";

/** What each receiver answers to its first requests; later ones get 200 `ok`. */
const OUTAGE: readonly ResponseSpec[] = [
  { status: 500, body: "internal error" },
  { status: 500, body: "internal error" },
  { status: 503, headers: { "retry-after": "1" }, body: "maintenance" },
  { status: 429, headers: { "retry-after": "2" }, body: "rate_limited" },
];

const outage = (_request: ReceivedRequest, n: number): ResponseSpec =>
  OUTAGE[n] ?? { status: 200, body: "ok" };

/** Seconds of `Retry-After` the answer to request `n` carried, if any. */
function retryAfterOf(receiver: ScriptedReceiver, n: number): number | undefined {
  const spec = receiver.answers[n];
  if (spec === undefined || "drop" in spec) return undefined;
  const value = spec.headers?.["retry-after"];
  return value === undefined ? undefined : Number(value);
}

/** The projects a request's alerts belong to (webhook: group_key; Slack: its headline). */
function projectOf(request: ReceivedRequest, kind: "slack" | "hook"): string {
  return kind === "hook" ? webhookBody(request).group_key : slackView(request).project;
}

/**
 * Every wait asked for was honoured: after an answer with `Retry-After: s`, the next request
 * for the same project (for a 429: the next request at all) came at least `s` seconds later.
 */
function waitsHonoured(receiver: ScriptedReceiver, kind: "slack" | "hook"): string[] {
  const problems: string[] = [];
  const requests = receiver.requests;
  for (const request of requests) {
    const seconds = retryAfterOf(receiver, request.index);
    if (seconds === undefined) continue;
    const sinkWide = receiver.statusOf(request.index) === 429;
    const project = projectOf(request, kind);
    const next = requests.find(
      (r) => r.index > request.index && (sinkWide || projectOf(r, kind) === project),
    );
    if (next === undefined) {
      problems.push(`${kind}: nothing came after request ${request.index}`);
      continue;
    }
    const waited = next.receivedAtMs - request.receivedAtMs;
    if (waited < seconds * 1000) {
      problems.push(
        `${kind}: request ${next.index} came ${waited} ms after request ${request.index}, ` +
          `which asked for Retry-After: ${seconds}`,
      );
    }
  }
  return problems;
}

describe("a sink that fails for a while", () => {
  let sim: TestSimulator;
  let slack: ScriptedReceiver;
  let hook: ScriptedReceiver;
  let exporter: AlertExporter;
  let projects: SimProject[];

  alertExporterSuite(
    {
      scripts: { slack: outage, hook: outage },
      projects: 2,
      layers: () => [
        {
          sinks: [
            { name: "slack", kind: "slack", groupWindow: 0.2 },
            { name: "hook", kind: "webhook", groupWindow: 0.2 },
          ],
        },
      ],
    },
    (s) => ({ sim, slack, hook, exporter, projects } = s),
  );

  it("delivers every alert once after 500s, a 503 and a 429, honouring Retry-After", async () => {
    const [a, b] = projects as [SimProject, SimProject];
    const scripted = new Set<string>();
    const fail = async (p: SimProject, status: "failed" | "error", error: string) => {
      const op = await scriptFailure(sim, p, error, status);
      scripted.add(op.id);
    };

    // One failure before the outage is noticed...
    await fail(a, "failed", "first failure");
    await sim.sim.advance(2);
    await waitFor("the first refused attempt", () => hook.requests.length >= 1);
    // ...and more while the sinks refuse.
    await fail(a, "error", "second failure");
    await fail(b, "failed", "third failure");
    await sim.sim.advance(2);

    const expected: ExpectedAlert[] = [
      ...(await expectedFailureAlerts(sim, a.projectId, (id) => scripted.has(id))),
      ...(await expectedFailureAlerts(sim, b.projectId, (id) => scripted.has(id))),
    ];
    expect(expected).toHaveLength(3);
    const expectedIds = expected.map((e) => e.id).sort();
    const expectedOps = expected.map((e) => e.operationId).sort();

    const hookDelivered = () =>
      hook.delivered().flatMap((r) => webhookBody(r).alerts.map((x) => x.id));
    const slackDelivered = () => slack.delivered().flatMap((r) => slackView(r).operations);
    await waitFor(
      "every alert delivered on both sinks",
      () =>
        expectedIds.every((id) => hookDelivered().includes(id)) &&
        expectedOps.every((id) => slackDelivered().includes(id)),
      30_000,
    );
    for (const p of projects) {
      await waitFor(
        "the outboxes to drain",
        () => exporter.state(p.projectId)?.outbox.length === 0,
      );
    }
    // A few more polls and notifier ticks: a late duplicate would show.
    await waitForCommits(exporter, a.projectId, 2);

    // The outage was real: each receiver refused its first four requests.
    for (const receiver of [slack, hook]) {
      expect(receiver.requests.slice(0, 4).map((r) => receiver.statusOf(r.index))).toEqual([
        500, 500, 503, 429,
      ]);
    }

    // Every alert arrived, none twice (among the attempts answered 2xx).
    expect(hookDelivered().sort()).toEqual(expectedIds);
    expect(slackDelivered().sort()).toEqual(expectedOps);
    expect(slack.delivered().reduce((n, r) => n + slackView(r).count, 0)).toBe(3);

    // Each attempt was signed afresh, and keyed by the alerts it carries.
    for (const request of hook.requests) {
      expect(verifyAsDocumented(SECRETS.signing, request.headers, request.rawBody)).toBe(true);
      const ids = webhookBody(request).alerts.map((x) => x.id);
      expect(request.headers["idempotency-key"]).toBe(expectedIdempotencyKey(ids));
    }

    // The waits asked for were honoured.
    expect([...waitsHonoured(hook, "hook"), ...waitsHonoured(slack, "slack")]).toEqual([]);
    // Slack: never two messages to the webhook within a second (by the receiver's clock).
    const gaps = slack.requests
      .slice(1)
      .map((r, i) => r.receivedAtMs - slack.requests[i]!.receivedAtMs);
    expect(gaps.filter((g) => g < 950)).toEqual([]);

    const metrics = await exporter.metrics();
    for (const sink of ["slack", "hook"]) {
      expect(sampleValue(metrics, "pgcp_alerts_delivered_total", { sink })).toBe(3);
      expect(
        sampleValue(metrics, "pgcp_alert_delivery_failures_total", {
          sink,
          reason: "server_error",
        }),
      ).toBe(3);
      expect(
        sampleValue(metrics, "pgcp_alert_delivery_failures_total", {
          sink,
          reason: "rate_limited",
        }),
      ).toBe(1);
      expect(sampleValue(metrics, "pgcp_alerts_dead_lettered_total", { sink })).toBeUndefined();
      expect(sampleValue(metrics, "pgcp_alerts_pending", { sink }) ?? 0).toBe(0);
    }
    // The logged retries name the wait the receiver asked for.
    const retries = exporter.logs
      .lines()
      .filter((l) => l.msg === "alert delivery failed; will retry");
    expect(
      retries.filter((l) => String(l.detail).startsWith("HTTP 503")).map((l) => l.retryInMs),
    ).toEqual([1000, 1000]);
    expect(
      retries.filter((l) => String(l.detail).startsWith("HTTP 429")).map((l) => l.retryInMs),
    ).toEqual([2000, 2000]);
    expect([
      ...secretsIn("the logs", exporter.logs.text()),
      ...secretsIn("/metrics", metrics),
    ]).toEqual([]);
  });
});
