/**
 * A platform incident's span, as pure rules: each failure's mark names the attempt the
 * operation's own span has (so that a link points at it), and the span of a resolved incident
 * runs from its first failure to its resolution, linked to the failures that formed and joined it.
 */
import { describe, expect, it } from "vitest";
import { failedAttempt, incidentSpan } from "../../src/alerts/rules/incident-span.js";
import {
  boardLookup,
  errorClass,
  incidentBoard,
  markFailure,
  type IncidentSettings,
} from "../../src/alerts/rules/incidents.js";
import { alertsFrom } from "../../src/alerts/rules/rules.js";
import {
  MAX_INCIDENT_SPAN_LINKS,
  type IncidentKey,
  type IncidentRecord,
} from "../../src/store/index.js";
import { endedAttempts, type Transition } from "../../src/sync/index.js";
import { FAILED_OPERATION } from "./support/failed-operation.js";

const rules = {
  cancelledIsFailure: true,
  retrying: false,
  recovered: false,
  linkTemplate: undefined,
};

describe("a failure's attempt", () => {
  const ended = (
    op: Partial<typeof FAILED_OPERATION>,
    status: "failed" | "error" | "cancelled",
    count = 1,
  ): Transition => ({
    kind: "ended",
    op: { ...FAILED_OPERATION, ...op },
    status,
    count,
    durationSeconds: 10,
  });
  const cases: [string, Transition, number][] = [
    ["read in failed", ended({ failuresCount: 2 }, "failed"), 2],
    [
      "read in error before the count rose",
      ended({ status: "error", failuresCount: 0 }, "error"),
      1,
    ],
    ["seen once it was retried", ended({ status: "running", failuresCount: 1 }, "failed"), 1],
    ["two of them between reads", ended({ status: "running", failuresCount: 2 }, "failed", 2), 2],
    ["a cancellation counted as a failure", ended({ status: "cancelled" }, "cancelled"), 2],
  ];

  it.each(cases)("is the attempt of the operation's span: %s", (_, transition, attempt) => {
    const [alert] = alertsFrom([transition], 0, rules);
    if (alert === undefined) throw new Error("no failure alert");
    const link = failedAttempt(alert);
    expect(link).toEqual({ operationId: FAILED_OPERATION.id, attempt });
    // The span of that attempt is one the operation's spans have, ended in the failure's status.
    const spans = endedAttempts([transition]).filter((a) => a.status === alert.status);
    expect(spans.map((a) => a.attempt)).toContain(link?.attempt);
  });
});

describe("an incident's span", () => {
  const settings: IncidentSettings = { windowMs: 600_000, minProjects: 3 };
  const key: IncidentKey = {
    action: "start_compute",
    regionId: "aws-us-east-2",
    errorClass: errorClass("safekeeper quorum not reached for endpoint ep-a-1 (sk-1)"),
  };

  /** Each failure marked in turn against the records so far, as the polls commit them. */
  function fail(
    failures: readonly { projectId: string; atMs: number; op?: string; attempt?: number }[],
  ): { projectId: string; record: IncidentRecord }[] {
    const records = new Map<string, IncidentRecord>();
    const list = () => [...records].map(([projectId, record]) => ({ projectId, record }));
    for (const [i, f] of failures.entries()) {
      const mark = markFailure(
        boardLookup(incidentBoard(list(), settings)),
        {
          projectId: f.projectId,
          alertId: `alert-${String(i)}`,
          key,
          ...(f.op === undefined
            ? {}
            : { attempt: { operationId: f.op, attempt: f.attempt ?? 1 } }),
        },
        f.atMs,
        settings,
      );
      const before = records.get(f.projectId) ?? { marks: [], carried: [], resolved: [] };
      records.set(f.projectId, { ...before, marks: [...before.marks, mark] });
    }
    return list();
  }

  it("runs from its first failure to its resolution, linked to every failure in it", () => {
    const records = fail([
      { projectId: "p-1", atMs: 1_000, op: "op-a" },
      // A mark committed before marks kept their attempt: in the incident, not linked.
      { projectId: "p-2", atMs: 2_000 },
      { projectId: "p-3", atMs: 3_000, op: "op-c" },
      { projectId: "p-1", atMs: 4_000, op: "op-a", attempt: 2 },
      { projectId: "p-4", atMs: 5_000, op: "op-d" },
    ]);
    const [incident] = incidentBoard(records, settings).open;
    if (incident === undefined) throw new Error("no incident formed");
    expect(incidentSpan(incident, 900_000)).toEqual({
      kind: "incident",
      incidentId: incident.id,
      action: "start_compute",
      regionId: "aws-us-east-2",
      errorClass: key.errorClass,
      failures: 5,
      projectCount: 4,
      startMs: 1_000,
      endMs: 900_000,
      links: [
        { operationId: "op-a", attempt: 1 },
        { operationId: "op-c", attempt: 1 },
        { operationId: "op-a", attempt: 2 },
        { operationId: "op-d", attempt: 1 },
      ],
    });
  });

  it("links the first failures only, each attempt once", () => {
    const many = Array.from({ length: MAX_INCIDENT_SPAN_LINKS + 20 }, (_, i) => ({
      projectId: `p-${String(i % 40)}`,
      atMs: i,
      op: `op-${String(i)}`,
    }));
    const records = fail([...many, { projectId: "p-0", atMs: 10_000, op: "op-0" }]);
    const [incident] = incidentBoard(records, settings).open;
    expect(incident?.failures).toBe(many.length + 1);
    expect(incident?.links.map((l) => l.operationId)).toEqual(
      many.slice(0, MAX_INCIDENT_SPAN_LINKS).map((f) => f.op),
    );
  });
});
