/**
 * What the Alertmanager sink posts, and how the firing set it re-sends lives and ends: an
 * alert keeps the same labels from its first delivery to its resolution (Alertmanager knows an
 * alert by its labels), and every firing alert ends, by a recovery, a newer alert of its
 * operation, or its time limit. A platform incident is one alert under the same labels from
 * its opening to its resolution.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  deliveryPayload,
  firingHorizonMs,
  refreshPayload,
  type AlertmanagerPayloadOptions,
} from "../../../src/alerts/sinks/alertmanager-payload.js";
import {
  acknowledgeFiring,
  expireFiring,
  settleEnded,
  type Alert,
  type FiringAlert,
} from "../../../src/store/index.js";
import { makeAlert, makeIncidentAlert, PROJECT } from "./fixtures.js";

const NOW = Date.parse("2025-06-01T12:06:00.000Z");
const OPTIONS: AlertmanagerPayloadOptions = {
  severity: {
    operation_failed: "critical",
    operation_stuck: "warning",
    operation_retrying: "info",
    compute_advice: "info",
    platform_incident: "critical",
  },
  staticLabels: { team: "platform" },
  runbookUrls: { operation_failed: "https://runbooks.example.test/failed" },
  generatorUrl: "https://pgcp.example.test/",
  resendIntervalMs: 60_000,
};

function recoveryOf(failed: Alert): Alert {
  return makeAlert({
    kind: "operation_recovered",
    operationId: failed.operationId,
    action: failed.action,
    status: "finished",
    resolves: failed.id,
    detectedAt: "2025-06-01T12:10:00.000Z",
  });
}

describe("the alerts posted", () => {
  it("labels a failure for routing and silencing, and annotates it for people", () => {
    const failed = makeAlert();
    const [posted] = deliveryPayload([failed], [], OPTIONS, NOW);
    expect(posted?.labels).toEqual({
      team: "platform",
      alertname: "PgcpOperationFailed",
      project_id: PROJECT,
      branch_id: failed.branchId,
      endpoint_id: failed.endpointId,
      action: "start_compute",
      status: "failed",
      operation_id: failed.operationId,
      severity: "critical",
    });
    expect(posted?.annotations).toMatchObject({
      error: failed.error,
      link: failed.link,
      runbook_url: "https://runbooks.example.test/failed",
    });
    expect(posted?.annotations.summary).toContain("start_compute");
    expect(posted?.startsAt).toBe(failed.updatedAt);
    expect(Date.parse(posted!.endsAt)).toBe(NOW + firingHorizonMs(60_000));
    expect(posted?.generatorURL).toBe("https://pgcp.example.test/");
  });

  it("annotates the names beside the ids, each absent while unknown, and never labels them", () => {
    const bare = makeAlert();
    const named = {
      ...bare,
      projectName: "Tenant Acme",
      branchName: "preview/pr-812",
      endpointName: "primary-rw",
    };
    const [first] = deliveryPayload([bare], [], OPTIONS, NOW);
    const [later] = deliveryPayload([named], [], OPTIONS, NOW);
    expect(later?.annotations).toMatchObject({
      project_name: "Tenant Acme",
      branch_name: "preview/pr-812",
      endpoint_name: "primary-rw",
    });
    for (const key of ["project_name", "branch_name", "endpoint_name"]) {
      expect(first?.annotations).not.toHaveProperty(key);
    }
    // The same alert to Alertmanager once its names are known: its labels are its identity.
    expect(later?.labels).toEqual(first?.labels);
    const [partly] = deliveryPayload([makeAlert({ branchName: "main" })], [], OPTIONS, NOW);
    expect(partly?.annotations.branch_name).toBe("main");
    expect(partly?.annotations).not.toHaveProperty("project_name");
    expect(partly?.annotations).not.toHaveProperty("endpoint_name");
    // A re-send of the firing set carries them too.
    const [resent] = refreshPayload([{ sink: "am", alert: named, sinceMs: NOW }], OPTIONS, NOW);
    expect(resent?.annotations.project_name).toBe("Tenant Acme");
  });

  it("names each kind and gives it its severity; static labels cannot replace the sink's", () => {
    const stuck = makeAlert({ kind: "operation_stuck", status: "running" });
    const retrying = makeAlert({ kind: "operation_retrying", status: "running" });
    const posted = deliveryPayload(
      [stuck, retrying],
      [],
      {
        ...OPTIONS,
        staticLabels: { alertname: "Other", severity: "none" },
      },
      NOW,
    );
    expect(posted.map((p) => [p.labels.alertname, p.labels.severity])).toEqual([
      ["PgcpOperationStuck", "warning"],
      ["PgcpOperationRetrying", "info"],
    ]);
  });

  it("resolves a failure with the labels it fired with, when its recovery is delivered", () => {
    const failed = makeAlert();
    const firing: FiringAlert[] = [{ sink: "am", alert: failed, sinceMs: NOW - 60_000 }];
    const fired = deliveryPayload([failed], [], OPTIONS, NOW)[0];
    const [resolved] = deliveryPayload([recoveryOf(failed)], firing, OPTIONS, NOW);
    expect(resolved?.labels).toEqual(fired?.labels);
    expect(resolved?.endsAt).toBe("2025-06-01T12:10:00.000Z");
  });

  it("sends a failure and its recovery in one batch as one resolved alert", () => {
    const failed = makeAlert();
    const posted = deliveryPayload([failed, recoveryOf(failed)], [], OPTIONS, NOW);
    expect(posted).toHaveLength(1);
    expect(posted[0]?.endsAt).toBe("2025-06-01T12:10:00.000Z");
  });

  it("posts nothing for the recovery of an alert it does not know", () => {
    expect(deliveryPayload([recoveryOf(makeAlert())], [], OPTIONS, NOW)).toEqual([]);
  });

  it("re-sends the firing set: firing ones ahead, ended ones at their end", () => {
    const a = makeAlert();
    const b = makeAlert();
    const posted = refreshPayload(
      [
        { sink: "am", alert: a, sinceMs: NOW - 1000 },
        { sink: "am", alert: b, sinceMs: NOW - 1000, endedAtMs: NOW - 10 },
      ],
      OPTIONS,
      NOW,
    );
    expect(posted.map((p) => Date.parse(p.endsAt))).toEqual([
      NOW + firingHorizonMs(60_000),
      NOW - 10,
    ]);
  });
});

describe("the firing set", () => {
  it("takes what the sink acknowledged, once, and only for that sink", () => {
    const failed = makeAlert();
    const once = acknowledgeFiring([], "am", [failed], NOW);
    const twice = acknowledgeFiring(once, "am", [failed], NOW + 5);
    expect(twice).toEqual([{ sink: "am", alert: failed, sinceMs: NOW }]);
    expect(acknowledgeFiring(twice, "other", [failed], NOW)).toHaveLength(2);
  });

  it("ends a stuck operation's alert when the operation fails, and drops a resolved one", () => {
    const stuck = makeAlert({ kind: "operation_stuck", status: "running" });
    const failed = makeAlert({
      operationId: stuck.operationId,
      detectedAt: "2025-06-01T12:07:00.000Z",
    });
    const afterFailure = acknowledgeFiring(
      acknowledgeFiring([], "am", [stuck], NOW),
      "am",
      [failed],
      NOW + 1,
    );
    expect(afterFailure.map((f) => [f.alert.kind, f.endedAtMs])).toEqual([
      ["operation_stuck", Date.parse("2025-06-01T12:07:00.000Z")],
      ["operation_failed", undefined],
    ]);
    const recovered = acknowledgeFiring(afterFailure, "am", [recoveryOf(failed)], NOW + 2);
    expect(recovered.map((f) => f.alert.kind)).toEqual(["operation_stuck"]);
  });

  it("ends an alert that fired for its limit, and forgets ended ones once sent", () => {
    const firing = acknowledgeFiring([], "am", [makeAlert()], NOW);
    expect(expireFiring(firing, "am", 3_600_000, NOW + 3_599_999)).toEqual(firing);
    const expired = expireFiring(firing, "am", 3_600_000, NOW + 3_600_000);
    expect(expired[0]?.endedAtMs).toBe(NOW + 3_600_000);
    expect(settleEnded(expired, "am", expired)).toEqual([]);
    // A firing alert that was sent stays.
    expect(settleEnded(firing, "am", firing)).toEqual(firing);
  });

  it("ends every alert it takes, by a recovery or its limit (property)", () => {
    const kinds = fc.constantFrom("operation_failed", "operation_stuck", "operation_retrying");
    fc.assert(
      fc.property(
        fc.array(fc.tuple(kinds, fc.nat(3), fc.boolean()), { maxLength: 20 }),
        (steps) => {
          let firing: FiringAlert[] = [];
          const raised: Alert[] = [];
          steps.forEach(([kind, op, recover], i) => {
            const alert = makeAlert({
              kind,
              operationId: `op-${String(op)}`,
              detectedAt: new Date(NOW + i * 1000).toISOString(),
            });
            raised.push(alert);
            firing = acknowledgeFiring(firing, "am", [alert], NOW + i * 1000);
            if (recover)
              firing = acknowledgeFiring(firing, "am", [recoveryOf(alert)], NOW + i * 1000);
          });
          // At most one alert per operation fires unended.
          const open = firing.filter((f) => f.endedAtMs === undefined);
          const keys = open.map((f) => f.alert.operationId);
          expect(new Set(keys).size).toBe(keys.length);
          // After the limit, nothing is left once the ended ones were sent.
          const expired = expireFiring(firing, "am", 60_000, NOW + 10_000_000);
          expect(settleEnded(expired, "am", expired)).toEqual([]);
        },
      ),
    );
  });
});

describe("a platform incident", () => {
  /** The incident's alerts, each raised a minute after the one before. */
  function incidentAlerts(): [Alert, Alert, Alert] {
    const at = (minute: number): string => new Date(NOW + minute * 60_000).toISOString();
    return [
      makeIncidentAlert("opened", { projectCount: 5 }, { detectedAt: at(0) }),
      makeIncidentAlert("updated", { projectCount: 9 }, { detectedAt: at(1) }),
      makeIncidentAlert("resolved", { projectCount: 9 }, { detectedAt: at(2) }),
    ];
  }

  it("keeps the same labels from its opening to its resolution, which ends it", () => {
    const [opened, updated, resolved] = incidentAlerts();
    const [first] = deliveryPayload([opened], [], OPTIONS, NOW);
    const [second] = deliveryPayload([updated], [], OPTIONS, NOW + 60_000);
    const [last] = deliveryPayload([resolved], [], OPTIONS, NOW + 120_000);
    expect(first?.labels).toEqual({
      team: "platform",
      alertname: "PgcpPlatformIncident",
      action: "start_compute",
      region: "aws-us-east-2",
      error_class: "safekeeper quorum not reached",
      severity: "critical",
    });
    expect(second?.labels).toEqual(first?.labels);
    expect(last?.labels).toEqual(first?.labels);
    // It starts at its first failure; it fires ahead until resolved, then ends at its resolution.
    for (const posted of [first, second, last]) expect(posted?.startsAt).toBe(opened.createdAt);
    expect(Date.parse(first!.endsAt)).toBe(NOW + firingHorizonMs(60_000));
    expect(last?.endsAt).toBe(resolved.detectedAt);
    // What changes is in the annotations.
    expect(first?.annotations).toMatchObject({
      summary:
        "start_compute failing in aws-us-east-2 across 5 projects: safekeeper quorum not reached",
      incident_id: "inc-7f3a2b",
      projects: "Tenant Acme (proj-000), proj-001, proj-002, proj-003, proj-004",
      project_count: "5",
      failures: "10",
    });
    expect(second?.annotations).toMatchObject({ project_count: "9", failures: "18" });
    expect(first?.annotations).not.toHaveProperty("project_name");
  });

  it("posts the newest of its alerts in one batch", () => {
    const [opened, updated, resolved] = incidentAlerts();
    const posted = deliveryPayload([opened, updated], [], OPTIONS, NOW);
    expect(posted).toHaveLength(1);
    expect(posted[0]?.annotations.project_count).toBe("9");
    const ended = deliveryPayload([opened, updated, resolved], [], OPTIONS, NOW);
    expect(ended.map((p) => p.endsAt)).toEqual([resolved.detectedAt]);
  });

  it("takes the runbook configured for it", () => {
    const [opened] = incidentAlerts();
    const options = {
      ...OPTIONS,
      runbookUrls: { platform_incident: "https://runbooks.example.test/incident" },
    };
    expect(deliveryPayload([opened], [], options, NOW)[0]?.annotations.runbook_url).toBe(
      "https://runbooks.example.test/incident",
    );
  });

  it("fires once in the set: an update replaces the opening unended, a resolution removes it", () => {
    const [opened, updated, resolved] = incidentAlerts();
    const failed = makeAlert();
    const afterOpen = acknowledgeFiring([], "am", [failed, opened], NOW);
    const afterUpdate = acknowledgeFiring(afterOpen, "am", [updated], NOW + 60_000);
    expect(afterUpdate).toEqual([
      { sink: "am", alert: failed, sinceMs: NOW },
      { sink: "am", alert: updated, sinceMs: NOW + 60_000 },
    ]);
    // Nothing is ended: a re-send posts the incident firing, under its labels, once.
    const resent = refreshPayload(afterUpdate, OPTIONS, NOW + 90_000);
    expect(resent.map((p) => [p.labels.alertname, p.endsAt])).toEqual([
      ["PgcpOperationFailed", new Date(NOW + 90_000 + firingHorizonMs(60_000)).toISOString()],
      ["PgcpPlatformIncident", new Date(NOW + 90_000 + firingHorizonMs(60_000)).toISOString()],
    ]);
    // The opening acknowledged again (a duplicate delivery) does not take the update's place.
    expect(acknowledgeFiring(afterUpdate, "am", [opened], NOW + 70_000)).toEqual(afterUpdate);
    // Another sink's entry stays.
    const other = acknowledgeFiring(afterUpdate, "other", [opened], NOW);
    const afterResolve = acknowledgeFiring(other, "am", [resolved], NOW + 120_000);
    expect(afterResolve).toEqual([
      { sink: "am", alert: failed, sinceMs: NOW },
      { sink: "other", alert: opened, sinceMs: NOW },
    ]);
    // A resolution the set never saw fired enters nothing.
    expect(acknowledgeFiring([], "am", [resolved], NOW)).toEqual([]);
  });

  it("ends once nothing updates or resolves it for the sink's limit", () => {
    const [opened] = incidentAlerts();
    const firing = acknowledgeFiring([], "am", [opened], NOW);
    const expired = expireFiring(firing, "am", 3_600_000, NOW + 3_600_000);
    const [posted] = refreshPayload(expired, OPTIONS, NOW + 3_600_000);
    expect(posted?.endsAt).toBe(new Date(NOW + 3_600_000).toISOString());
    expect(settleEnded(expired, "am", expired)).toEqual([]);
  });
});
