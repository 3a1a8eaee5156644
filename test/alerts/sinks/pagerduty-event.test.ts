import { describe, expect, it } from "vitest";
import {
  incidentDedupKey,
  pagerDutyEvent,
  pagerDutySummary,
  PAGERDUTY_LIMITS,
  type PagerDutyTrigger,
} from "../../../src/alerts/sinks/index.js";
import { defaultSink } from "../../../src/config/index.js";
import { makeAlert, makeIncidentAlert, mixedBatch, PROJECT } from "./fixtures.js";

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
    const details = huge.payload.custom_details;
    expect("error" in details && String(details.error).length).toBe(PAGERDUTY_LIMITS.maxErrorText);
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

describe("a platform incident's events", () => {
  const states = ["opened", "updated", "resolved"] as const;

  it("trigger, trigger, resolve under one dedup_key derived from the incident's id", () => {
    const alerts = states.map((state) => makeIncidentAlert(state));
    const events = alerts.map((a) => pagerDutyEvent(a, options));
    expect(events.map((e) => e?.event_action)).toEqual(["trigger", "trigger", "resolve"]);
    expect(new Set(alerts.map((a) => a.id)).size).toBe(3);
    expect(events.map((e) => e?.dedup_key)).toEqual(Array(3).fill("pgcp-incident-inc-7f3a2b"));
    expect(events[2]).toEqual({
      routing_key: ROUTING_KEY,
      event_action: "resolve",
      dedup_key: incidentDedupKey("inc-7f3a2b"),
    });
    // Another incident, another key; one too long for PagerDuty is hashed.
    expect(incidentDedupKey("inc-other")).not.toBe(incidentDedupKey("inc-7f3a2b"));
    const long = incidentDedupKey("x".repeat(300));
    expect(long).toMatch(/^pgcp-incident-sha256-[0-9a-f]{64}$/);
    expect(long).toBe(incidentDedupKey("x".repeat(300)));
  });

  it("summarises what fails where, and details the incident, not its carrying project", () => {
    const alert = makeIncidentAlert("updated", { projectCount: 140, failures: 233 });
    const event = trigger(
      pagerDutyEvent(alert, { ...options, statusPageUrl: "https://pgcp.example.test/" }),
    );
    expect(event.payload).toMatchObject({
      summary:
        "Platform incident: start_compute failing in aws-us-east-2 across 140 projects: safekeeper quorum not reached",
      source: "aws-us-east-2",
      severity: "critical",
      timestamp: alert.detectedAt,
      class: "start_compute",
    });
    expect(event.payload).not.toHaveProperty("component");
    expect(event.links).toEqual([
      { href: "https://pgcp.example.test/", text: "pgcp-exporter status page" },
    ]);
    const details = event.payload.custom_details;
    expect(details).toMatchObject({
      kind: "platform_incident",
      incident_id: "inc-7f3a2b",
      state: "updated",
      region_id: "aws-us-east-2",
      error_class: "safekeeper quorum not reached",
      project_count: 140,
      failures_count: 233,
      alert_id: alert.id,
    });
    expect("projects" in details && details.projects).toHaveLength(100);
    expect("projects" in details && details.projects[0]).toEqual({
      project_id: "proj-000",
      project_name: "Tenant Acme",
    });
    expect(JSON.stringify(event)).not.toContain(PROJECT);
    // The configured severity, and PagerDuty's limit on the summary.
    const custom = { ...severities, platform_incident: "error" as const };
    expect(
      trigger(pagerDutyEvent(alert, { ...options, severities: custom })).payload.severity,
    ).toBe("error");
    const huge = makeIncidentAlert("opened");
    const longError = { ...huge, incident: { ...huge.incident!, errorClass: "e ".repeat(900) } };
    expect(pagerDutySummary(longError).length).toBe(PAGERDUTY_LIMITS.maxSummary);
    expect(pagerDutySummary(longError).endsWith("…")).toBe(true);
  });
});
