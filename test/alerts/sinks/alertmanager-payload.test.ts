/**
 * What the Alertmanager sink posts, and how the firing set it re-sends lives and ends: an
 * alert keeps the same labels from its first delivery to its resolution (Alertmanager knows an
 * alert by its labels), and every firing alert ends, by a recovery, a newer alert of its
 * operation, or its time limit.
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
import { makeAlert, PROJECT } from "./fixtures.js";

const NOW = Date.parse("2025-06-01T12:06:00.000Z");
const OPTIONS: AlertmanagerPayloadOptions = {
  severity: {
    operation_failed: "critical",
    operation_stuck: "warning",
    operation_retrying: "info",
    compute_advice: "info",
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
