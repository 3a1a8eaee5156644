import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  alertSchema,
  MAX_ALSO_RESOLVES,
  outboxEntrySchema,
  resolvedIds,
  type Alert,
  type OutboxEntry,
} from "../../src/store/index.js";
import {
  alertId,
  alertsFrom,
  outboxEntries,
  routeAlerts,
  routes,
  type AlertHistory,
  type AlertRulesOptions,
  type SinkRoute,
} from "../../src/alerts/rules/rules.js";
import type { AlertedTo } from "../../src/sync/index.js";
import { acknowledge, addToOutbox, alertForSink, deadLetter } from "../../src/store/index.js";
import {
  nextBatch,
  retryDelayMs,
  type SinkPolicy,
} from "../../src/alerts/pipeline/delivery-plan.js";
import type { Transition } from "../../src/sync/transitions.js";
import { FAILED_OPERATION } from "./support/failed-operation.js";

const op = FAILED_OPERATION;

const defaults: AlertRulesOptions = {
  cancelledIsFailure: false,
  retrying: false,
  recovered: true,
  linkTemplate: "https://console.example/app/projects/{project_id}/operations/{operation_id}",
};

const at = Date.parse("2026-01-01T00:00:11Z");

describe("alert rules", () => {
  it("raises a failure for failed and error arrivals, with the operation's details and link", () => {
    const alerts = alertsFrom(
      [{ kind: "ended", op, status: "failed", count: 1, durationSeconds: 10 }],
      at,
      defaults,
    );
    expect(alerts).toEqual([
      {
        id: alertId("operation_failed", op),
        kind: "operation_failed",
        projectId: "p-1",
        operationId: op.id,
        branchId: "br-1",
        endpointId: "ep-1",
        action: "start_compute",
        status: "failed",
        failuresCount: 1,
        error: "compute did not start",
        createdAt: "2026-01-01T00:00:00.000Z",
        updatedAt: "2026-01-01T00:00:10.000Z",
        durationSeconds: 10,
        detectedAt: "2026-01-01T00:00:11.000Z",
        link: `https://console.example/app/projects/p-1/operations/${op.id}`,
      },
    ]);
  });

  it("names an inferred failure by the status it arrived at, and its recovery resolves it", () => {
    const finished = { ...op, status: "finished", error: undefined };
    const transitions: Transition[] = [
      { kind: "new", op: finished },
      { kind: "ended", op: finished, status: "failed", count: 1, durationSeconds: 5 },
      { kind: "ended", op: finished, status: "finished", count: 1, durationSeconds: 10 },
      {
        kind: "recovered",
        op: finished,
        after: "failed",
        resolves: { status: "failed", failuresCount: 1 },
      },
    ];
    const [failure, recovery] = alertsFrom(transitions, at, defaults);
    expect(failure?.status).toBe("failed");
    expect(recovery?.kind).toBe("operation_recovered");
    expect(recovery?.resolves).toBe(failure?.id);
  });

  it("follows the options for cancelled, retrying and recovered", () => {
    const cancelled: Transition = {
      kind: "ended",
      op: { ...op, status: "cancelled" },
      status: "cancelled",
      count: 1,
      durationSeconds: 1,
    };
    const retried: Transition = { kind: "retried", op: { ...op, status: "running" }, by: 1 };
    const recovered: Transition = {
      kind: "recovered",
      op: { ...op, status: "finished" },
      after: "stuck",
      resolves: { status: "running", failuresCount: 0 },
    };
    expect(alertsFrom([cancelled, retried], at, defaults)).toEqual([]);
    const all = alertsFrom([cancelled, retried, recovered], at, {
      ...defaults,
      cancelledIsFailure: true,
      retrying: true,
    });
    expect(all.map((a) => a.kind)).toEqual([
      "operation_failed",
      "operation_retrying",
      "operation_recovered",
    ]);
    expect(alertsFrom([recovered], at, { ...defaults, recovered: false })).toEqual([]);
  });

  it("gives one transition one id, also when raised again after a restart", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.nat(), (id, status, failures) => {
        const a = { ...op, id, status, failuresCount: failures };
        expect(alertId("operation_failed", a)).toBe(alertId("operation_failed", { ...a }));
        expect(alertId("operation_failed", a)).not.toBe(alertId("operation_stuck", a));
        expect(alertId("operation_failed", a)).not.toBe(
          alertId("operation_failed", { ...a, failuresCount: failures + 1 }),
        );
      }),
    );
  });
});

function alert(overrides: Partial<Alert> = {}): Alert {
  const [base] = alertsFrom(
    [{ kind: "ended", op, status: "failed", count: 1, durationSeconds: 10 }],
    at,
    defaults,
  );
  return { ...base!, ...overrides };
}

describe("routing", () => {
  it("drops first, then matches; every condition of a rule must hold", () => {
    const route = {
      name: "oncall",
      drop: [{ actions: ["check_availability"] }],
      match: [{ projects: ["p-1"], kinds: ["operation_failed" as const] }, { statuses: ["error"] }],
    };
    expect(routes(route, alert())).toBe(true);
    expect(routes(route, alert({ projectId: "p-2" }))).toBe(false);
    expect(routes(route, alert({ projectId: "p-2", status: "error" }))).toBe(true);
    expect(routes(route, alert({ action: "check_availability", status: "error" }))).toBe(false);
    expect(routes({ name: "all", drop: [], match: [] }, alert({ projectId: "p-9" }))).toBe(true);
  });

  it("leaves out alerts no sink takes", () => {
    const sinks = [
      { name: "a", drop: [], match: [{ projects: ["p-1"] }] },
      { name: "b", drop: [{ projects: ["p-1"] }], match: [] },
    ];
    expect(outboxEntries([alert()], sinks, at)).toEqual([
      { alert: alert(), createdAtMs: at, pending: ["a"] },
    ]);
    expect(outboxEntries([alert({ projectId: "p-3" })], sinks.slice(0, 1), at)).toEqual([]);
  });
});

describe("recoveries go only where their failure went", () => {
  const sinks = [
    { name: "a", drop: [], match: [] },
    { name: "b", drop: [], match: [] },
    { name: "c", drop: [{ kinds: ["operation_recovered" as const] }], match: [] },
  ];
  const failure = alert();
  const recovery = alert({ id: "r-1", kind: "operation_recovered", resolves: failure.id });
  const pendingOf = (entries: { pending: string[] }[]) => entries.map((e) => e.pending);

  it("sends none for a failure no sink was sent", () => {
    expect(outboxEntries([recovery], sinks, at)).toEqual([]);
  });

  it("sends it to the sinks that got the failure, that still have it, and that route it", () => {
    const history = {
      alerted: (id: string) => (id === op.id ? [{ id: failure.id, sinks: ["a", "b", "c"] }] : []),
      deadLettered: (id: string, sink: string) => id === failure.id && sink === "b",
    };
    expect(pendingOf(outboxEntries([recovery], sinks, at, history))).toEqual([["a"]]);
    // Another operation's history does not count.
    expect(outboxEntries([{ ...recovery, operationId: "other" }], sinks, at, history)).toEqual([]);
  });

  it("follows a failure raised in the same poll", () => {
    const routes = [
      { name: "a", drop: [], match: [] },
      { name: "b", drop: [{ kinds: ["operation_failed" as const] }], match: [] },
    ];
    expect(pendingOf(outboxEntries([failure, recovery], routes, at))).toEqual([["a"], ["a"]]);
  });
});

describe("a recovery resolves every earlier alert of its operation", () => {
  const everything = [{ name: "pd", drop: [], match: [] }];
  const running = { ...op, status: "running", error: undefined };
  const failedAt = (failuresCount: number) => ({ ...op, failuresCount });
  const finished = (failuresCount: number) => ({ ...op, status: "finished", failuresCount });
  const recoveredAfter = (after: "failed" | "stuck", status: string, failuresCount: number) =>
    ({
      kind: "recovered",
      op: finished(failuresCount),
      after,
      resolves: { status, failuresCount },
    }) as const;

  /**
   * Runs polls as the sync engine does: each poll's alerts are routed with the history of the
   * earlier ones (where each alert went), which the poll then records.
   */
  function polls(
    batches: readonly (readonly Transition[])[],
    sinks: readonly SinkRoute[] = everything,
    options: AlertRulesOptions = defaults,
    deadLettered: (id: string, sink: string) => boolean = () => false,
  ): OutboxEntry[][] {
    const alerted: AlertedTo[] = [];
    const history: AlertHistory = { alerted: () => alerted, deadLettered };
    return batches.map((transitions) => {
      const alerts = alertsFrom(transitions, at, options);
      const routed = routeAlerts(alerts, sinks, [], at, history);
      for (const a of alerts) {
        const entry = routed.entries.find((e) => e.alert.id === a.id);
        alerted.push({ id: a.id, sinks: entry?.pending ?? [] });
      }
      return [...routed.entries];
    });
  }
  const recoveryOf = (entries: OutboxEntry[][]) => entries.flat().at(-1)!;

  it("failed, retried, failed again, finished: resolves both failures", () => {
    const entries = polls([
      [{ kind: "ended", op: failedAt(1), status: "failed", count: 1, durationSeconds: 10 }],
      [{ kind: "retried", op: { ...running, failuresCount: 1 }, by: 1 }],
      [{ kind: "ended", op: failedAt(2), status: "failed", count: 1, durationSeconds: 10 }],
      [recoveredAfter("failed", "failed", 2)],
    ]);
    const first = alertId("operation_failed", failedAt(1));
    const second = alertId("operation_failed", failedAt(2));
    const recovery = recoveryOf(entries);
    expect(recovery.alert).toMatchObject({
      kind: "operation_recovered",
      resolves: second,
      alsoResolves: [first],
    });
    expect(recovery.resolvesBySink).toBeUndefined();
    expect(resolvedIds(alertForSink(recovery, "pd"))).toEqual([second, first]);
  });

  it("stuck, then failed, finished: resolves the stuck alert too", () => {
    const stuck = { ...running, failuresCount: 0 };
    const entries = polls([
      [{ kind: "stuck", op: stuck, openSeconds: 600 }],
      [{ kind: "ended", op: failedAt(1), status: "failed", count: 1, durationSeconds: 700 }],
      [recoveredAfter("failed", "failed", 1)],
    ]);
    expect(recoveryOf(entries).alert).toMatchObject({
      resolves: alertId("operation_failed", failedAt(1)),
      alsoResolves: [alertId("operation_stuck", stuck)],
    });
  });

  it("resolves retrying alerts, also those raised in the same poll", () => {
    const entries = polls(
      [
        [{ kind: "ended", op: failedAt(1), status: "failed", count: 1, durationSeconds: 10 }],
        [
          { kind: "retried", op: { ...running, failuresCount: 1 }, by: 1 },
          recoveredAfter("failed", "failed", 1),
        ],
      ],
      everything,
      { ...defaults, retrying: true },
    );
    const retrying = alertId("operation_retrying", { ...running, failuresCount: 1 });
    expect(recoveryOf(entries).alert).toMatchObject({
      resolves: alertId("operation_failed", failedAt(1)),
      alsoResolves: [retrying],
    });
  });

  it("names to each sink only the alerts it was sent and did not give up on", () => {
    // "pd" takes stuck alerts and recoveries, not failures; "none" takes only retries.
    const sinks = [
      {
        name: "pd",
        drop: [],
        match: [{ kinds: ["operation_stuck" as const, "operation_recovered" as const] }],
      },
      { name: "all", drop: [], match: [] },
      { name: "none", drop: [], match: [{ kinds: ["operation_retrying" as const] }] },
    ];
    const stuck = { ...running, failuresCount: 0 };
    const stuckId = alertId("operation_stuck", stuck);
    const failedId = alertId("operation_failed", failedAt(1));
    const entries = polls(
      [
        [{ kind: "stuck", op: stuck, openSeconds: 600 }],
        [{ kind: "ended", op: failedAt(1), status: "failed", count: 1, durationSeconds: 700 }],
        [recoveredAfter("failed", "failed", 1)],
      ],
      sinks,
      defaults,
      (id, sink) => id === failedId && sink === "all",
    );
    const recovery = recoveryOf(entries);
    expect(recovery.pending).toEqual(["pd", "all"]);
    expect(recovery.alert).toMatchObject({ resolves: failedId, alsoResolves: [stuckId] });
    // "pd" never got the failure; "all" gave up on it.
    expect(alertForSink(recovery, "pd")).toMatchObject({ resolves: stuckId });
    expect(alertForSink(recovery, "pd").alsoResolves).toBeUndefined();
    expect(resolvedIds(alertForSink(recovery, "all"))).toEqual([stuckId]);
    // Stored as it is, and read back; an entry stored before these fields reads back too.
    expect(outboxEntrySchema.parse(recovery)).toEqual(recovery);
    const { resolvesBySink: _narrowed, ...before } = recovery;
    const { alsoResolves: _also, ...alertBefore } = before.alert;
    expect(outboxEntrySchema.safeParse({ ...before, alert: alertBefore }).success).toBe(true);
  });

  it("is silenced where a silence kept every alert it resolves from the sink", () => {
    const failure = alert();
    const stuckId = "stuck-1";
    const recovery = alert({ id: "r-1", kind: "operation_recovered", resolves: failure.id });
    const history: AlertHistory = {
      alerted: () => [
        { id: stuckId, sinks: ["a"], silenced: [{ sink: "b", silence: "night" }] },
        { id: failure.id, sinks: [], silenced: [{ sink: "a", silence: "deploy" }] },
      ],
      deadLettered: () => false,
    };
    const sinks = [
      { name: "a", drop: [], match: [] },
      { name: "b", drop: [], match: [] },
    ];
    const routed = routeAlerts([recovery], sinks, [], at, history);
    // "a" got the stuck alert: it is told; "b" got nothing, a silence kept the stuck one.
    expect(routed.entries.map((e) => e.pending)).toEqual([["a"]]);
    expect(alertForSink(routed.entries[0]!, "a")).toMatchObject({ resolves: stuckId });
    expect(routed.silenced.map((q) => [q.sink, q.silence])).toEqual([["b", "night"]]);
  });

  it("names at most the newest MAX_ALSO_RESOLVES others", () => {
    const ids = Array.from({ length: MAX_ALSO_RESOLVES + 20 }, (_, i) => `f-${String(i)}`);
    const history: AlertHistory = {
      alerted: () => ids.map((id) => ({ id, sinks: ["a"] })),
      deadLettered: () => false,
    };
    const last = ids.at(-1)!;
    const recovery = alert({ id: "r-1", kind: "operation_recovered", resolves: last });
    const [entry] = outboxEntries([recovery], [{ name: "a", drop: [], match: [] }], at, history);
    expect(entry!.alert.alsoResolves).toEqual(
      ids.slice(0, -1).reverse().slice(0, MAX_ALSO_RESOLVES),
    );
    expect(alertSchema.safeParse(entry!.alert).success).toBe(true);
  });
});

describe("outbox", () => {
  const entry = (id: string, createdAtMs = 0, pending = ["slack", "hook"]) => ({
    alert: alert({ id }),
    createdAtMs,
    pending,
  });

  it("adds each alert once and drops the newest beyond the limit", () => {
    const first = addToOutbox([], [entry("a"), entry("b"), entry("a")], 10);
    expect(first.outbox.map((e) => e.alert.id)).toEqual(["a", "b"]);
    const full = addToOutbox(first.outbox, [entry("c"), entry("d")], 3);
    expect(full.outbox.map((e) => e.alert.id)).toEqual(["a", "b", "c"]);
    expect(full.dropped.map((e) => e.alert.id)).toEqual(["d"]);
  });

  it("keeps an alert until every sink acknowledged it", () => {
    const outbox = [entry("a"), entry("b")];
    const once = acknowledge(outbox, "slack", new Set(["a"]));
    expect(once.map((e) => [e.alert.id, e.pending])).toEqual([
      ["a", ["hook"]],
      ["b", ["slack", "hook"]],
    ]);
    expect(acknowledge(once, "hook", new Set(["a"])).map((e) => e.alert.id)).toEqual(["b"]);
  });

  it("moves given-up alerts to bounded dead letters", () => {
    const result = deadLetter([entry("a", 0, ["hook"])], [], "hook", new Set(["a"]), "max_age", 5);
    expect(result.outbox).toEqual([]);
    expect(result.deadLetters).toEqual([
      { alert: alert({ id: "a" }), sink: "hook", reason: "max_age", atMs: 5 },
    ]);
  });
});

describe("delivery plan", () => {
  const policy: SinkPolicy = {
    name: "slack",
    groupWindowMs: 5000,
    maxAgeMs: 86_400_000,
    maxBatch: 2,
  };
  const entry = (id: string, createdAtMs: number) => ({
    alert: alert({ id }),
    createdAtMs,
    pending: ["slack"],
  });

  it("waits for the grouping window, then sends the project with the oldest alert", () => {
    const projects = [
      {
        projectId: "p-1",
        outbox: [entry("a", 3000), entry("b", 4000), entry("c", 4500)],
        retryAtMs: undefined,
      },
      { projectId: "p-2", outbox: [entry("d", 1000)], retryAtMs: undefined },
    ];
    expect(nextBatch(projects, policy, 5999)).toBeUndefined();
    expect(nextBatch(projects, policy, 6000)?.projectId).toBe("p-2");
    const later = nextBatch(projects.slice(0, 1), policy, 9000);
    expect(later?.entries.map((e) => e.alert.id)).toEqual(["a", "b"]);
  });

  it("skips a project that is backing off", () => {
    const projects = [{ projectId: "p-1", outbox: [entry("a", 0)], retryAtMs: 20_000 }];
    expect(nextBatch(projects, policy, 10_000)).toBeUndefined();
    expect(nextBatch(projects, policy, 20_000)?.projectId).toBe("p-1");
  });

  it("honours Retry-After, else backs off exponentially with jitter up to five minutes", () => {
    expect(retryDelayMs(3, 7000, 0.5)).toBe(7000);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        (n, r) => {
          const delay = retryDelayMs(n, undefined, r);
          expect(delay).toBeGreaterThanOrEqual(100);
          expect(delay).toBeLessThanOrEqual(Math.min(300_000, 1000 * 2 ** (n - 1)));
        },
      ),
    );
  });
});
