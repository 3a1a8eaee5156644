/**
 * Routing with silences, through the intake's poll hook as the daemon builds it from a
 * configuration: an alert a silence matches while its window is open goes to none of the sinks
 * it covers and is listed with the silence's name; its recovery, even after the window, is
 * silenced there too; a sink the silence does not cover gets both.
 */
import { describe, expect, it } from "vitest";
import { configSchema, resolveSinks, type ConfigInput } from "../../src/config/index.js";
import type { AlertedTo, RoutedAlerts } from "../../src/sync/index.js";
import type { OperationSnapshot, Transition } from "../../src/sync/transitions.js";
import { FAILED_OPERATION } from "./support/failed-operation.js";
import { intakeOf } from "./support/intake.js";

const op: OperationSnapshot = {
  ...FAILED_OPERATION,
  branchId: undefined,
  endpointId: undefined,
  error: undefined,
};
const failed: Transition = { kind: "ended", op, status: "failed", count: 1, durationSeconds: 10 };
const recovered: Transition = {
  kind: "recovered",
  op: { ...op, status: "finished" },
  after: "failed",
  resolves: { status: "failed", failuresCount: 1 },
};

const env = { PGCP_SLACK_WEBHOOK_URL: "https://slack.example/x", PGCP_WEBHOOK_URL: "https://h/x" };

/**
 * The intake's poll hook for the sinks slack and hook, with these silences, and the history a
 * poll keeps.
 */
function routing(silences: ConfigInput["silences"]) {
  const config = configSchema.parse({
    api: { key: "k" },
    projects: ["p-1"],
    sinks: [
      { name: "slack", kind: "slack" },
      { name: "hook", kind: "webhook" },
    ],
    silences,
  });
  const intake = intakeOf(config, resolveSinks(config, env), {
    addAlerts: () => Promise.reject(new Error("a poll's alerts are enqueued by its commit")),
    wake: () => undefined,
    dropped: () => undefined,
  });
  const hook = intake.pollHook();
  if (hook === undefined) throw new Error("no hook");
  const alerted = new Map<string, AlertedTo[]>();
  return (transitions: Transition[], nowMs: number): RoutedAlerts => {
    const routed = hook(transitions, {
      nowMs,
      alerted: (id) => alerted.get(id) ?? [],
      deadLettered: () => false,
    });
    // As the poll does: where each alert went and where it was silenced, for a recovery later.
    const raised = new Map(
      [...routed.entries, ...routed.silenced].map((r) => [r.alert.id, r.alert]),
    );
    for (const alert of raised.values()) {
      const before = alerted.get(alert.operationId) ?? [];
      alerted.set(alert.operationId, [
        ...before,
        {
          id: alert.id,
          sinks: routed.entries.find((e) => e.alert.id === alert.id)?.pending ?? [],
          silenced: routed.silenced
            .filter((q) => q.alert.id === alert.id)
            .map(({ sink, silence }) => ({ sink, silence })),
        },
      ]);
    }
    return routed;
  };
}

const sent = (r: RoutedAlerts) => r.entries.map((e) => [e.alert.kind, e.pending]);
const silenced = (r: RoutedAlerts) => r.silenced.map((s) => [s.alert.kind, s.sink, s.silence]);

const during = Date.parse("2026-01-01T00:30:00Z");
const after = Date.parse("2026-01-01T02:00:00Z");
const window = { start: "2026-01-01T00:00:00Z", end: "2026-01-01T01:00:00Z" };

describe("silences in routing", () => {
  it("send neither a silenced failure nor, after the window, its recovery", () => {
    const route = routing([{ name: "migration", ...window }]);
    const failure = route([failed], during);
    expect(sent(failure)).toEqual([]);
    expect(silenced(failure)).toEqual([
      ["operation_failed", "slack", "migration"],
      ["operation_failed", "hook", "migration"],
    ]);
    // The window has closed; the recovery follows its failure, silenced by the same silence.
    const recovery = route([recovered], after);
    expect(sent(recovery)).toEqual([]);
    expect(silenced(recovery)).toEqual([
      ["operation_recovered", "slack", "migration"],
      ["operation_recovered", "hook", "migration"],
    ]);
  });

  it("still send both to a sink the silence does not cover", () => {
    const route = routing([{ name: "quiet-slack", sinks: ["slack"], ...window }]);
    const failure = route([failed], during);
    expect(sent(failure)).toEqual([["operation_failed", ["hook"]]]);
    expect(silenced(failure)).toEqual([["operation_failed", "slack", "quiet-slack"]]);
    const recovery = route([recovered], after);
    expect(sent(recovery)).toEqual([["operation_recovered", ["hook"]]]);
    expect(silenced(recovery)).toEqual([["operation_recovered", "slack", "quiet-slack"]]);
  });

  it("silence a failure and its recovery found in the same poll", () => {
    const route = routing([{ name: "migration", ...window }]);
    const both = route([failed, recovered], during);
    expect(sent(both)).toEqual([]);
    expect(silenced(both).map(([kind]) => kind)).toEqual([
      "operation_failed",
      "operation_failed",
      "operation_recovered",
      "operation_recovered",
    ]);
  });

  it("send what the conditions do not match, and everything outside the window", () => {
    const route = routing([
      { name: "other-project", projects: ["p-2"], ...window },
      { name: "stuck-only", kinds: ["operation_stuck"], ...window },
      { name: "nightly", cron: "0 23 * * *", duration: "2h", timezone: "Europe/Berlin" },
    ]);
    expect(sent(route([failed], during))).toEqual([["operation_failed", ["slack", "hook"]]]);
    // 23:00 in Berlin is 22:00Z in January: the nightly window is open at 22:30Z.
    const nightly = route(
      [{ ...failed, op: { ...op, id: "op-2" } }],
      Date.parse("2026-01-01T22:30:00Z"),
    );
    expect(sent(nightly)).toEqual([]);
    expect(silenced(nightly).map(([, , name]) => name)).toEqual(["nightly", "nightly"]);
  });
});
