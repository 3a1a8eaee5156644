/**
 * The PagerDuty sink end to end: the exporter (in-process) watches the simulator and delivers to
 * a local stand-in for PagerDuty's Events API v2 (test/support/pagerduty-receiver.ts), which
 * validates every event as PagerDuty documents it and keeps its alerts ("incidents") by
 * dedup_key. A failed operation opens an incident keyed by its alert id, and its recovery
 * resolves it, and every other incident opened for the operation (stuck, earlier failures,
 * retries); a delivery retried after a 500 (PagerDuty took the event, its answer was lost) or
 * a 429 with Retry-After opens no second incident; a 400 dead-letters the alert with
 * PagerDuty's own words (the routing key redacted); and the routing key shows nowhere: not in
 * the logs, /metrics, the status page or the state.
 */
import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startPagerDutyReceiver,
  type PagerDutyIncident,
  type PagerDutyReceiver,
} from "../../support/pagerduty-receiver.js";
import type { TestSimulator } from "../../support/simulator.js";
import type { RawConfig } from "../../../src/config/index.js";
import { alertExporterSuite, type AlertExporterSuite } from "./alert-suite.js";
import {
  expectedFailureAlerts,
  failsAfter,
  LINK_TEMPLATE,
  sampleValue,
  secretsIn,
  waitFor,
  type AlertExporter,
  type SimProject,
} from "./support.js";

/** 32 characters, as PagerDuty's routing keys are. */
const ROUTING_KEY = "PDE2EROUTINGKEYSECRET0123456789a";
const STATUS_PAGE = "https://pgcp.example.test/status";

/**
 * The suite's stand-in for PagerDuty (there before the exporter starts, closed after it stops)
 * and the exporter, with one PagerDuty sink, `oncall`, over `more`.
 */
function pagerDutySuite(
  tempPrefix: string,
  more: RawConfig,
  use: (suite: AlertExporterSuite<never> & { readonly pd: PagerDutyReceiver }) => void,
): void {
  let pd: PagerDutyReceiver;
  beforeAll(async () => {
    pd = await startPagerDutyReceiver();
  });
  afterAll(() => pd.close());
  alertExporterSuite(
    {
      receivers: [],
      tempPrefix,
      layers: () => [
        {
          ...more,
          sinks: [
            {
              name: "oncall",
              kind: "pagerduty",
              url: pd.url,
              routingKeyEnv: "PD_ROUTING_KEY",
              groupWindow: 0,
              timeout: 2,
            },
          ],
        },
      ],
      env: () => ({ PD_ROUTING_KEY: ROUTING_KEY }),
    },
    (s) => {
      use({ ...s, pd });
    },
  );
}

describe("the PagerDuty sink", () => {
  let sim: TestSimulator;
  let pd: PagerDutyReceiver;
  let exporter: AlertExporter;
  let project: SimProject;
  let stateDir: string;

  pagerDutySuite(
    "pgcp-pagerduty-e2e-",
    { alerts: { statusPageUrl: STATUS_PAGE } },
    (s) => ({ sim, pd, exporter, project, stateDir } = s),
  );

  /** Fails `failAt` s after creation; with `retryAt`, is retried then and finishes 1 s later. */
  function script(action: string, failAt: number, retryAt?: number) {
    return sim.sim.scriptOperation({
      project_id: project.projectId,
      branch_id: project.branchId,
      endpoint_id: project.endpointId,
      action,
      steps:
        retryAt === undefined
          ? failsAfter(failAt, "failed", "compute node unreachable")
          : [
              { status: "running", after_seconds: 0 },
              { status: "failed", after_seconds: failAt, error: "compute node unreachable" },
              { status: "running", after_seconds: retryAt },
              { status: "finished", after_seconds: retryAt + 1 },
            ],
    });
  }

  /** The id of the failure alert the exporter must raise for the operation (from the truth). */
  async function failureId(operationId: string): Promise<string> {
    const [alert] = await expectedFailureAlerts(sim, project.projectId, (id) => id === operationId);
    if (alert === undefined) throw new Error(`operation ${operationId} has not failed`);
    return alert.id;
  }

  async function incidentOf(dedupKey: string): Promise<PagerDutyIncident> {
    return waitFor(`an incident for ${dedupKey}`, () => pd.incidentsFor(dedupKey)[0]);
  }

  it("opens an incident keyed by the alert id for a failure, and resolves it on recovery", async () => {
    const op = await script("apply_config", 1, 4);
    await sim.sim.advance(2);
    const id = await failureId(op.id);
    const incident = await incidentOf(id);
    const [trigger] = incident.events;
    expect(trigger).toMatchObject({
      routing_key: ROUTING_KEY,
      event_action: "trigger",
      dedup_key: id,
      payload: {
        source: project.projectId,
        severity: "critical",
        component: project.endpointId,
        group: project.branchId,
        class: "apply_config",
        custom_details: {
          id,
          kind: "operation_failed",
          operation_id: op.id,
          status: "failed",
          failures_count: 1,
          error: "compute node unreachable",
        },
      },
      links: [
        {
          href: LINK_TEMPLATE.replace("{project_id}", project.projectId).replace(
            "{operation_id}",
            op.id,
          ),
          text: "Operation in the console",
        },
        { href: STATUS_PAGE, text: "pgcp-exporter status page" },
      ],
      client: "pgcp-exporter",
      client_url: STATUS_PAGE,
    });
    expect(trigger!.payload!.summary).toBe(
      `Operation failed: apply_config (failed) in project ${project.projectId} on endpoint ${project.endpointId}: compute node unreachable`,
    );
    expect(Number.isNaN(Date.parse(trigger!.payload!.timestamp ?? ""))).toBe(false);

    // The service retries it and it finishes: the same incident is resolved.
    await sim.sim.advance(4);
    await waitFor("the incident to be resolved", () => incident.status === "resolved");
    expect(incident.events.map((e) => e.event_action)).toEqual(["trigger", "resolve"]);
    expect(pd.incidentsFor(id)).toHaveLength(1);
    await waitFor(
      "the outbox to drain",
      () => exporter.state(project.projectId)?.outbox.length === 0,
    );
  });

  it("opens no second incident when a delivery is retried after a 500 or a 429", async () => {
    // PagerDuty takes the event but the answer is a 500: the exporter sends it again.
    pd.respondNext({ status: 500, ingest: true });
    const lost = await script("start_compute", 1);
    await sim.sim.advance(2);
    const lostId = await failureId(lost.id);
    const incident = await incidentOf(lostId);
    await waitFor("the trigger sent again", () => incident.events.length === 2);
    expect(pd.incidentsFor(lostId)).toHaveLength(1);
    expect(incident.events.map((e) => e.event_action)).toEqual(["trigger", "trigger"]);

    // A 429 with Retry-After: the next attempt waits for it, then one incident.
    pd.respondNext({ status: 429, headers: { "retry-after": "1" } });
    const from = pd.log.length;
    const limited = await script("suspend_compute", 1);
    await sim.sim.advance(2);
    const limitedId = await failureId(limited.id);
    await incidentOf(limitedId);
    const attempts = pd.log.slice(from).filter((l) => l.event?.dedup_key === limitedId);
    expect(attempts.map((a) => a.status)).toEqual([429, 202]);
    const waited = attempts[1]!.request.receivedAtMs - attempts[0]!.request.receivedAtMs;
    expect(waited).toBeGreaterThanOrEqual(950);
    expect(pd.incidentsFor(limitedId)).toHaveLength(1);

    const lines = exporter.logs.lines();
    const retried = lines.filter((l) => l.msg === "alert delivery failed; will retry");
    expect(retried.map((l) => l.reason)).toEqual(
      expect.arrayContaining(["server_error", "rate_limited"]),
    );
  });

  it("dead-letters an alert PagerDuty refuses, with its reason, redacted", async () => {
    pd.respondNext({
      status: 400,
      json: {
        status: "invalid event",
        message: "Event object is invalid",
        errors: [`routing key ${ROUTING_KEY} is disabled`],
      },
    });
    const refused = await script("create_branch", 1);
    await sim.sim.advance(2);
    const id = await failureId(refused.id);
    const dead = await waitFor("the dead letter", () =>
      exporter.state(project.projectId)?.deadLetters.find((d) => d.alert.id === id),
    );
    expect(dead).toMatchObject({
      sink: "oncall",
      reason: "HTTP 400 Event object is invalid (routing key [redacted] is disabled)",
    });
    expect(pd.incidentsFor(id)).toEqual([]);
    const metrics = await exporter.metrics();
    expect(
      sampleValue(metrics, "pgcp_alerts_dead_lettered_total", {
        sink: "oncall",
        reason: "client_error",
      }),
    ).toBe(1);
    const page = await exporter.get("/");
    expect(page.text).toContain("Event object is invalid (routing key [redacted] is disabled)");
  });

  it("never shows the routing key: logs, /metrics, the status page, the state", async () => {
    const metrics = await exporter.metrics();
    const probes = [
      await exporter.get("/"),
      await exporter.get("/healthz"),
      await exporter.get("/readyz"),
    ];
    expect(probes.map((p) => p.status)).toEqual([200, 200, 200]);
    // The page lists the sink by name and kind.
    expect(probes[0]!.text).toContain("oncall");
    const states = await Promise.all(
      (await readdir(stateDir)).map((f) => readFile(path.join(stateDir, f), "utf8")),
    );
    // The failures went through every kind of answer above, each logged.
    expect(exporter.logs.lines().some((l) => l.msg === "alerts delivered")).toBe(true);
    expect([
      ...secretsIn("the logs", exporter.logs.text(), [ROUTING_KEY]),
      ...secretsIn("/metrics", metrics, [ROUTING_KEY]),
      ...probes.flatMap((p) => secretsIn("a probe or the status page", p.text, [ROUTING_KEY])),
      ...states.flatMap((s) => secretsIn("the state", s, [ROUTING_KEY])),
    ]).toEqual([]);
  });
});

describe("the PagerDuty sink, when an operation finishes after several alerts", () => {
  let sim: TestSimulator;
  let pd: PagerDutyReceiver;
  let project: SimProject;

  pagerDutySuite(
    "pgcp-pagerduty-resolve-e2e-",
    {
      // apply_storage_config is stuck once it has been open for a second by the API's clock.
      stuck: { default: 86_400, actions: { start_compute: 86_400, apply_storage_config: 1 } },
      alerts: { retrying: true },
    },
    (s) => ({ sim, pd, project } = s),
  );

  /** The incidents opened for `operationId`, as (kind, failures count, status). */
  function incidentsOf(operationId: string): [string, number, string][] {
    return pd.incidents
      .filter((i) => i.events[0]?.payload?.custom_details?.operation_id === operationId)
      .map((i): [string, number, string] => {
        const details = i.events[0]!.payload!.custom_details!;
        return [String(details.kind), Number(details.failures_count), i.status];
      })
      .sort();
  }

  async function opened(operationId: string, count: number): Promise<void> {
    await waitFor(`${String(count)} incidents for ${operationId}`, () =>
      incidentsOf(operationId).length >= count ? true : undefined,
    );
  }

  it("resolves its stuck incident, each failure's and each retry's", async () => {
    const error = "volume detach timed out";
    const op = await sim.sim.scriptOperation({
      project_id: project.projectId,
      branch_id: project.branchId,
      endpoint_id: project.endpointId,
      action: "apply_storage_config",
      steps: [
        { status: "running", after_seconds: 0 },
        { status: "failed", after_seconds: 2, error },
        { status: "running", after_seconds: 4 },
        { status: "failed", after_seconds: 6, error },
        { status: "running", after_seconds: 8 },
        { status: "finished", after_seconds: 10 },
      ],
    });
    await sim.sim.advance(1.5);
    await opened(op.id, 1);
    // Each step is seen before the next: failed, retried, failed again, retried.
    for (let step = 2; step <= 5; step++) {
      await sim.sim.advance(2);
      await opened(op.id, step);
    }
    expect(incidentsOf(op.id)).toEqual([
      ["operation_failed", 1, "triggered"],
      ["operation_failed", 2, "triggered"],
      ["operation_retrying", 1, "triggered"],
      ["operation_retrying", 2, "triggered"],
      ["operation_stuck", 0, "triggered"],
    ]);

    await sim.sim.advance(2);
    await waitFor("every incident of the operation resolved", () =>
      incidentsOf(op.id).every(([, , status]) => status === "resolved") ? true : undefined,
    );
    expect(incidentsOf(op.id).map(([kind, failures]) => [kind, failures])).toEqual([
      ["operation_failed", 1],
      ["operation_failed", 2],
      ["operation_retrying", 1],
      ["operation_retrying", 2],
      ["operation_stuck", 0],
    ]);
    // One resolve each, none for a key PagerDuty was not sent.
    const resolves = pd.log.filter((l) => l.event?.event_action === "resolve");
    const keys = new Set(pd.incidents.map((i) => i.dedupKey));
    expect(resolves.every((l) => keys.has(l.event!.dedup_key!))).toBe(true);
  });
});
