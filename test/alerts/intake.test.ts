/**
 * The one intake (src/alerts/pipeline/intake.ts): alerts from every source run the same
 * routing stages (name, route, hold) before they are enqueued, and the sinks' lanes are woken
 * only for what reached an outbox. The outbox here is a recording of the commits asked for.
 */
import { describe, expect, it } from "vitest";
import { adviceAlert, INCIDENT_HOLD } from "../../src/alerts/index.js";
import { configSchema, resolveSinks, type ConfigInput } from "../../src/config/index.js";
import type { OutboxEntry } from "../../src/store/index.js";
import type { Transition } from "../../src/sync/transitions.js";
import { ADVICE_INPUT } from "./support/advice-input.js";
import { FAILED_OPERATION } from "./support/failed-operation.js";
import { intakeOf } from "./support/intake.js";

const env = { PGCP_SLACK_WEBHOOK_URL: "https://slack.example/x", PGCP_WEBHOOK_URL: "https://h/x" };

const ADVICE = adviceAlert(ADVICE_INPUT);

function failure(projectId: string): Transition {
  const op = {
    ...FAILED_OPERATION,
    projectId,
    id: `${FAILED_OPERATION.id.slice(0, -1)}${projectId.at(-1)}`,
  };
  return { kind: "ended", op, status: "failed", count: 1, durationSeconds: 10 };
}

/** An intake over slack (every kind but advice) and hook (advice too), recording its effects. */
function intakeFor(overrides: Partial<ConfigInput> = {}, dropped: OutboxEntry[] = []) {
  const config = configSchema.parse({
    api: { key: "k" },
    projects: ["p-1", "p-2"],
    sinks: [
      { name: "slack", kind: "slack" },
      {
        name: "hook",
        kind: "webhook",
        holdIncidentAlerts: false,
        match: [{ kinds: ["compute_advice", "operation_failed"] }],
      },
    ],
    incidents: { minProjects: 2 },
    ...overrides,
  });
  const seen = {
    commits: [] as { projectId: string; entries: readonly OutboxEntry[] }[],
    woken: [] as string[],
    dropped: [] as [string, number][],
  };
  const intake = intakeOf(config, resolveSinks(config, env), {
    addAlerts: (projectId, entries) => {
      seen.commits.push({ projectId, entries });
      return Promise.resolve(dropped);
    },
    wake: (projectId) => seen.woken.push(projectId),
    dropped: (projectId, count) => seen.dropped.push([projectId, count]),
  });
  return { intake, seen, config };
}

describe("the alert intake", () => {
  it("routes an alert raised outside a poll, commits it and wakes the lanes once", async () => {
    const { intake, seen } = intakeFor();
    expect(await intake.submit("p-1", [ADVICE])).toBe(true);
    expect(seen.commits.map((c) => [c.projectId, c.entries.map((e) => e.pending)])).toEqual([
      ["p-1", [["hook"]]],
    ]);
    expect(seen.woken).toEqual(["p-1"]);
  });

  it("commits nothing and wakes no lane when a silence covers every sink", async () => {
    const { intake, seen } = intakeFor({
      silences: [{ name: "all", start: "2020-01-01T00:00:00Z", end: "2099-01-01T00:00:00Z" }],
    });
    expect(await intake.submit("p-1", [ADVICE])).toBe(false);
    expect(seen.commits).toEqual([]);
    expect(seen.woken).toEqual([]);
  });

  it("reports what a full outbox had no room for", async () => {
    const { intake, seen } = intakeFor({}, [{ alert: ADVICE, createdAtMs: 0, pending: ["hook"] }]);
    await intake.submit("p-1", [ADVICE]);
    expect(seen.dropped).toEqual([["p-1", 1]]);
  });

  it("holds a poll's failures that join an incident from the sinks that wait for it", () => {
    const { intake } = intakeFor();
    const hook = intake.pollHook();
    if (hook === undefined) throw new Error("no hook");
    const context = (nowMs: number) => ({
      nowMs,
      alerted: () => [],
      deadLettered: () => false,
      regionId: "aws-us-east-2",
    });
    const nowMs = Date.parse("2026-01-01T00:00:20Z");
    const first = hook([failure("p-1")], context(nowMs));
    // Alone, the failure goes to both sinks.
    expect(first.entries.map((e) => e.pending)).toEqual([["slack", "hook"]]);
    const second = hook([failure("p-2")], context(nowMs + 1000));
    // With it, two projects failed alike: an incident formed, which slack waits for.
    expect(second.incidentMarks?.map((m) => m.incidentId !== undefined)).toEqual([true]);
    expect(second.entries.map((e) => e.pending)).toEqual([["hook"]]);
    expect(second.silenced.map((s) => [s.sink, s.silence])).toEqual([["slack", INCIDENT_HOLD]]);
  });

  it("takes a reload's sinks from the next submission on", async () => {
    const { intake, seen, config } = intakeFor();
    intake.applyConfig(config, []);
    expect(intake.pollHook()).toBeUndefined();
    expect(await intake.submit("p-1", [ADVICE])).toBe(false);
    expect(seen.commits).toEqual([]);
  });
});
