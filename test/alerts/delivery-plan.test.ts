/**
 * The delivery's decisions beyond the next batch: what an attempt's outcome leads to, and when
 * a sink's lane next has something to do, which must agree with what a run at that moment does
 * (a lane woken too early spins, one woken too late delays alerts).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  expired,
  laneDueMs,
  nextBatch,
  settlement,
  type ProjectOutbox,
  type SinkPolicy,
} from "../../src/alerts/pipeline/delivery-plan.js";
import { alertsFrom } from "../../src/alerts/rules/rules.js";
import type { OutboxEntry } from "../../src/store/index.js";
import { FAILED_OPERATION } from "./support/failed-operation.js";

const [ALERT] = alertsFrom(
  [{ kind: "ended", op: FAILED_OPERATION, status: "failed", count: 1, durationSeconds: 10 }],
  Date.parse("2026-01-01T00:00:11Z"),
  { cancelledIsFailure: false, retrying: false, recovered: true, linkTemplate: "" },
);

function entry(id: string, createdAtMs: number, pending = ["slack"]): OutboxEntry {
  if (ALERT === undefined) throw new Error("no alert");
  return { alert: { ...ALERT, id }, createdAtMs, pending };
}

const policy: SinkPolicy = { name: "slack", groupWindowMs: 5000, maxAgeMs: 60_000, maxBatch: 5 };

describe("what an attempt leads to", () => {
  it("acknowledges a 2xx, dead-letters a refusal for good, and backs off from the rest", () => {
    expect(settlement({ ok: true }, 3, 0.5)).toEqual({ kind: "acknowledge" });
    const refused = { ok: false, reason: "client_error", permanent: true, detail: "404" } as const;
    expect(settlement(refused, 0, 0.5)).toEqual({ kind: "dead_letter", text: "client_error" });
    expect(settlement({ ...refused, deadLetterReason: "invalid routing key" }, 0, 0.5)).toEqual({
      kind: "dead_letter",
      text: "invalid routing key",
    });
    const down = { ok: false, reason: "server_error", permanent: false, detail: "503" } as const;
    expect(settlement(down, 2, 0.5)).toEqual({
      kind: "retry",
      failures: 3,
      delayMs: 2000,
      holdSink: false,
    });
    // A 429 holds the whole sink for its Retry-After.
    const limited = {
      ok: false,
      reason: "rate_limited",
      permanent: false,
      detail: "429",
      retryAfterMs: 7000,
    } as const;
    expect(settlement(limited, 0, 0.5)).toEqual({
      kind: "retry",
      failures: 1,
      delayMs: 7000,
      holdSink: true,
    });
  });
});

describe("when a lane is next due", () => {
  it("is never, with nothing pending for the sink", () => {
    const projects = [{ projectId: "p-1", outbox: [entry("a", 0, ["pd"])], retryAtMs: undefined }];
    expect(laneDueMs(projects, policy, { notBeforeMs: 0, refreshAtMs: undefined })).toBe(undefined);
    expect(laneDueMs([], policy, { notBeforeMs: 0, refreshAtMs: 9000 })).toBe(9000);
  });

  it("is the end of the grouping window, the backoff or the pace, whichever is latest", () => {
    const outbox = [entry("a", 1000), entry("b", 3000)];
    const due = (retryAtMs: number | undefined, notBeforeMs: number) =>
      laneDueMs([{ projectId: "p-1", outbox, retryAtMs }], policy, {
        notBeforeMs,
        refreshAtMs: undefined,
      });
    expect(due(undefined, 0)).toBe(6000);
    expect(due(20_000, 0)).toBe(20_000);
    expect(due(undefined, 30_000)).toBe(30_000);
    // An alert's maximum age is kept whatever the pace.
    expect(due(undefined, 90_000)).toBe(61_000);
  });

  it("agrees with what a run at that moment does", () => {
    const projectArb = fc.record({
      births: fc.array(fc.integer({ min: 0, max: 100_000 }), { maxLength: 4 }),
      retryAtMs: fc.option(fc.integer({ min: 0, max: 150_000 }), { nil: undefined }),
      otherSink: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(projectArb, { maxLength: 5 }),
        fc.integer({ min: 0, max: 150_000 }),
        (raw, notBeforeMs) => {
          const projects: ProjectOutbox[] = raw.map((p, i) => ({
            projectId: `p-${String(i)}`,
            outbox: p.births.map((b, j) =>
              entry(`a-${String(i)}-${String(j)}`, b, p.otherSink ? ["pd"] : ["slack"]),
            ),
            retryAtMs: p.retryAtMs,
          }));
          const times = { notBeforeMs, refreshAtMs: undefined };
          const due = laneDueMs(projects, policy, times);
          const work = (t: number) =>
            projects.some((p) => expired(p.outbox, policy, t).length > 0) ||
            (t >= notBeforeMs && nextBatch(projects, policy, t) !== undefined);
          if (due === undefined) {
            expect(work(1_000_000)).toBe(false);
            return;
          }
          expect(work(due)).toBe(true);
          expect(work(due - 1)).toBe(false);
        },
      ),
    );
  });
});
