/**
 * The `compute_advice` alert (src/alerts/rules/advice.ts): one per endpoint, reason and compute
 * start, with a stable id; taken only by a sink whose `match` names the kind (and silenced as
 * any alert); and rendered by every kind of sink without an operation.
 */
import { describe, expect, it } from "vitest";
import { adviceAlert, routeAlerts, routes, type SinkRoute } from "../../src/alerts/index.js";
import {
  deliveryPayload,
  pagerDutyEvent,
  renderSlackMessage,
  webhookPayload,
  webhookPayloadSchema,
} from "../../src/alerts/sinks/index.js";
import { alertSchema } from "../../src/store/index.js";
import { ADVICE_INPUT } from "./support/advice-input.js";

const INPUT = ADVICE_INPUT;

const ADVICE = adviceAlert(INPUT);

const route = (match: SinkRoute["match"], drop: SinkRoute["drop"] = []): SinkRoute => ({
  name: "s",
  drop,
  match,
});

describe("the compute_advice alert", () => {
  it("is one alert per endpoint, reason and start, about no operation", () => {
    expect(alertSchema.parse(ADVICE)).toEqual(ADVICE);
    expect(ADVICE).toMatchObject({
      kind: "compute_advice",
      projectId: "p-1",
      endpointId: "ep-1",
      operationId: "",
      action: "",
      status: "file_cache",
      createdAt: "2025-06-01T10:00:00.000Z",
      durationSeconds: 1200,
    });
    expect(ADVICE.advice?.summary).toBe(
      "The file cache hit ratio of endpoint ep-1 (0.25-2 CU) stayed below 99% for 10 min (now 91.50%): its working set is not cached; a larger minimum size has a larger file cache.",
    );
    expect(adviceAlert({ ...INPUT, detectedAtMs: INPUT.detectedAtMs + 60_000 }).id).toBe(ADVICE.id);
    expect(adviceAlert({ ...INPUT, reason: "connections" }).id).not.toBe(ADVICE.id);
    expect(adviceAlert({ ...INPUT, startedAtMs: INPUT.startedAtMs + 1000 }).id).not.toBe(ADVICE.id);
    expect(adviceAlert({ ...INPUT, reason: "connections", threshold: 0.9 }).advice?.summary).toBe(
      "Endpoint ep-1 (0.25-2 CU) stayed at or above 90% of its max_connections for 10 min (now 12 of 112): max_connections follows the minimum size and does not grow when the compute scales up; raise the minimum size, or use the pooled connection.",
    );
  });

  it("goes only to a sink whose match names its kind", () => {
    expect(routes(route([]), ADVICE)).toBe(false);
    expect(routes(route([{ kinds: ["operation_failed"] }]), ADVICE)).toBe(false);
    expect(routes(route([{ projects: ["p-1"] }]), ADVICE)).toBe(false);
    expect(routes(route([{ kinds: ["compute_advice"] }]), ADVICE)).toBe(true);
    expect(routes(route([{ kinds: ["compute_advice"], statuses: ["connections"] }]), ADVICE)).toBe(
      false,
    );
    expect(routes(route([{ kinds: ["compute_advice"] }], [{ projects: ["p-1"] }]), ADVICE)).toBe(
      false,
    );
    const silence = {
      name: "quiet",
      match: { kinds: ["compute_advice" as const] },
      sinks: undefined,
    };
    const routed = routeAlerts([ADVICE], [route([{ kinds: ["compute_advice"] }])], [silence], 0);
    expect(routed.entries).toEqual([]);
    expect(routed.silenced).toMatchObject([{ sink: "s", silence: "quiet" }]);
  });

  it("is rendered by every kind of sink without an operation", () => {
    const webhook = webhookPayload([ADVICE], INPUT.detectedAtMs);
    expect(webhookPayloadSchema.parse(webhook)).toEqual(webhook);
    expect(webhook.alerts[0]?.advice).toEqual({
      reason: "file_cache",
      hit_ratio: 91.5,
      connections: 12,
      max_connections: 112,
      min_compute_units: 0.25,
      max_compute_units: 2,
      window_seconds: 600,
      summary: ADVICE.advice?.summary,
    });

    const slack = JSON.stringify(renderSlackMessage([ADVICE]));
    expect(slack).toContain("Larger compute advised");
    expect(slack).toContain("its working set is not cached");
    expect(slack).not.toContain("operation `");

    const pagerduty = pagerDutyEvent(ADVICE, {
      routingKey: "k",
      severities: {
        operation_failed: "critical",
        operation_stuck: "warning",
        operation_retrying: "info",
        compute_advice: "info",
        platform_incident: "critical",
      },
    });
    expect(pagerduty).toMatchObject({
      event_action: "trigger",
      dedup_key: ADVICE.id,
      payload: {
        severity: "info",
        class: "compute_advice",
        component: "ep-1",
        summary: expect.stringMatching(
          /^Larger compute advised: file_cache in project p-1 on endpoint ep-1: The file cache hit ratio/,
        ) as unknown,
      },
    });

    const [postable] = deliveryPayload(
      [ADVICE],
      [],
      {
        severity: {
          operation_failed: "critical",
          operation_stuck: "warning",
          operation_retrying: "info",
          compute_advice: "info",
          platform_incident: "critical",
        },
        staticLabels: {},
        runbookUrls: {},
        generatorUrl: undefined,
        resendIntervalMs: 60_000,
      },
      INPUT.detectedAtMs,
    );
    expect(postable?.labels).toEqual({
      alertname: "PgcpLargerComputeAdvised",
      project_id: "p-1",
      branch_id: "br-1",
      endpoint_id: "ep-1",
      status: "file_cache",
      severity: "info",
    });
    expect(postable?.annotations.description).toBe(ADVICE.advice?.summary);
  });
});
