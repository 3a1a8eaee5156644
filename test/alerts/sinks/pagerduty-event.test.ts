import { describe, expect, it } from "vitest";
import {
  pagerDutyEvent,
  pagerDutySummary,
  PAGERDUTY_LIMITS,
  type PagerDutyTrigger,
} from "../../../src/alerts/sinks/index.js";
import { defaultSink } from "../../../src/config/index.js";
import { makeAlert, mixedBatch, PROJECT } from "./fixtures.js";

const ROUTING_KEY = "R0UTINGKEY0123456789abcdefABCDEF";
const severities = defaultSink("pagerduty").severity;
const options = { routingKey: ROUTING_KEY, severities };

function trigger(event: ReturnType<typeof pagerDutyEvent>): PagerDutyTrigger {
  if (event?.event_action !== "trigger") throw new Error("not a trigger");
  return event;
}

describe("PagerDuty events", () => {
  it("triggers a failure keyed by the alert id, with the operation's fields", () => {
    const alert = makeAlert({ action: "apply_config" });
    const event = trigger(
      pagerDutyEvent(alert, { ...options, statusPageUrl: "https://pgcp.example.test/" }),
    );
    expect(event).toMatchObject({
      routing_key: ROUTING_KEY,
      event_action: "trigger",
      dedup_key: alert.id,
      payload: {
        source: PROJECT,
        severity: "critical",
        timestamp: alert.detectedAt,
        component: alert.endpointId,
        group: alert.branchId,
        class: "apply_config",
      },
      links: [
        { href: alert.link, text: "Operation in the console" },
        { href: "https://pgcp.example.test/", text: "pgcp-exporter status page" },
      ],
      client: "pgcp-exporter",
      client_url: "https://pgcp.example.test/",
    });
    expect(event.payload.summary).toBe(
      `Operation failed: apply_config (failed) in project ${PROJECT} on endpoint ep-primary-001: compute start failed: could not allocate`,
    );
    expect(event.payload.custom_details).toMatchObject({
      id: alert.id,
      kind: "operation_failed",
      project_id: PROJECT,
      operation_id: alert.operationId,
      branch_id: alert.branchId,
      endpoint_id: alert.endpointId,
      status: "failed",
      failures_count: 3,
      error: alert.error,
      link: alert.link,
    });
  });

  it("gives each kind its configured severity, and resolves the id a recovery names", () => {
    const [failed, stuck, retrying, recovered] = mixedBatch();
    const custom = { ...severities, operation_stuck: "error" as const };
    const events = [failed!, stuck!, retrying!, recovered!].map((a) =>
      pagerDutyEvent(a, { ...options, severities: custom }),
    );
    expect(events.map((e) => e?.event_action)).toEqual([
      "trigger",
      "trigger",
      "trigger",
      "resolve",
    ]);
    expect(events.slice(0, 3).map((e) => trigger(e).payload.severity)).toEqual([
      "critical",
      "error",
      "info",
    ]);
    expect(events[3]).toEqual({
      routing_key: ROUTING_KEY,
      event_action: "resolve",
      dedup_key: failed!.id,
    });
    // Nothing to resolve without the id of what it resolves.
    const orphan = makeAlert({ kind: "operation_recovered" });
    expect(pagerDutyEvent(orphan, options)).toBeUndefined();
  });

  it("cuts the summary to 1,024 characters with a marker, never splitting a character", () => {
    const long = makeAlert({ error: `${"😀".repeat(600)} tail` });
    const summary = pagerDutySummary(long);
    expect(summary.length).toBeLessThanOrEqual(PAGERDUTY_LIMITS.maxSummary);
    expect(summary.endsWith("…")).toBe(true);
    expect(summary).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    // Whitespace in an error is flattened to one line.
    expect(pagerDutySummary(makeAlert({ error: "line one\n\n  line two" }))).toMatch(
      /: line one line two$/,
    );
    // Cut in custom_details too, to keep the event far below PagerDuty's 512 KB.
    const huge = trigger(pagerDutyEvent(makeAlert({ error: "x".repeat(100_000) }), options));
    expect(String(huge.payload.custom_details.error).length).toBe(PAGERDUTY_LIMITS.maxErrorText);
  });

  it("names the project and the endpoint or branch beside their ids once known", () => {
    const named = makeAlert({
      action: "apply_config",
      projectName: "Tenant Acme",
      branchName: "main",
      endpointName: "primary-rw",
    });
    expect(pagerDutySummary(named)).toBe(
      `Operation failed: apply_config (failed) in project Tenant Acme (${PROJECT}) on endpoint primary-rw (ep-primary-001): compute start failed: could not allocate`,
    );
    const { endpointId: _e, ...onBranch } = named;
    expect(pagerDutySummary(onBranch)).toContain("on branch main (br-main-001)");
    expect(trigger(pagerDutyEvent(named, options)).payload.custom_details).toMatchObject({
      project_name: "Tenant Acme",
      branch_name: "main",
      endpoint_name: "primary-rw",
    });
    expect(pagerDutySummary(makeAlert())).toContain(
      `in project ${PROJECT} on endpoint ep-primary-001`,
    );
  });

  it("leaves out what an alert does not have", () => {
    const alert = makeAlert({ kind: "operation_stuck", status: "running" });
    delete alert.endpointId;
    delete alert.branchId;
    delete alert.link;
    delete alert.error;
    const event = trigger(pagerDutyEvent(alert, options));
    expect(event.payload).not.toHaveProperty("component");
    expect(event.payload).not.toHaveProperty("group");
    expect(event).not.toHaveProperty("links");
    expect(event).not.toHaveProperty("client_url");
    expect(event.payload.summary).toBe(
      `Operation stuck: start_compute (running) in project ${PROJECT}`,
    );
    expect(event.payload.severity).toBe("warning");
  });
});
