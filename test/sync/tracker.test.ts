import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Operation } from "../../src/contract/index.js";
import { observe, type TrackedOperation, type TrackerOptions } from "../../src/sync/tracker.js";
import type { Transition } from "../../src/sync/transitions.js";

const options: TrackerOptions = {
  stuckAfterSeconds: (action) => (action === "start_compute" ? 120 : 900),
  watchFailedSeconds: 600,
};

const T0 = Date.parse("2026-01-01T00:00:00Z");
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/** The service's side of one operation: every status it passes through, as the simulator does. */
function recordsOf(statuses: string[]): Operation[] {
  let failures = 0;
  return statuses.map((status, i) => {
    if (status === "failed" || status === "error") failures += 1;
    return {
      id: "0b9e5d4c-1111-4222-8333-944455556666",
      project_id: "p-1",
      branch_id: "br-1",
      endpoint_id: "ep-1",
      action: "start_compute",
      status,
      failures_count: failures,
      created_at: iso(T0),
      updated_at: iso(T0 + i * 10_000),
      total_duration_ms: i * 10_000,
    };
  });
}

function arrivalsIn(transitions: Transition[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const t of transitions) {
    if (t.kind === "ended") counts.set(t.status, (counts.get(t.status) ?? 0) + t.count);
  }
  return counts;
}

const END = new Set(["finished", "failed", "error", "cancelled", "skipped"]);

/** A status path the simulator can produce: retries after failed, then one final status. */
const statusPath = fc
  .tuple(
    fc.array(fc.constant(["running", "failed"]), { maxLength: 4 }),
    fc.constantFrom("finished", "error", "cancelled", "skipped", "failed", "running"),
  )
  .map(([retries, last]) => ["scheduling", ...retries.flat(), "running", last]);

describe("tracker", () => {
  it("counts every arrival at an end status once, whichever records it sees", () => {
    fc.assert(
      fc.property(
        statusPath,
        fc.array(fc.boolean(), { minLength: 16, maxLength: 16 }),
        (path, pick) => {
          const records = recordsOf(path);
          // The poller sees some of the records, always the last one.
          const observed = records.filter((_, i) => i === records.length - 1 || pick[i]);
          let tracked: TrackedOperation | undefined;
          const transitions: Transition[] = [];
          for (const record of observed) {
            const result = observe(tracked, record, Date.parse(record.updated_at), options);
            transitions.push(...result.transitions);
            tracked = result.next;
          }
          const truth = new Map<string, number>();
          for (const s of path) if (END.has(s)) truth.set(s, (truth.get(s) ?? 0) + 1);
          expect(arrivalsIn(transitions)).toEqual(truth);
        },
      ),
    );
  });

  it("does not count a record seen again unchanged", () => {
    const [, running, failed] = recordsOf(["scheduling", "running", "failed"]);
    const first = observe(undefined, running!, T0, options);
    const second = observe(first.next, failed!, T0, options);
    const third = observe(second.next, failed!, T0, options);
    expect(arrivalsIn(second.transitions)).toEqual(new Map([["failed", 1]]));
    expect(third.transitions).toEqual([]);
    expect(third.next?.watchUntilMs).toBe(second.next?.watchUntilMs);
  });

  it("stops following an operation at a final status and keeps watching a failed one", () => {
    const records = recordsOf(["running", "failed", "running", "finished"]);
    const failed = observe(undefined, records[1]!, T0, options);
    expect(failed.next?.watchUntilMs).toBe(T0 + 600_000);
    const finished = observe(failed.next, records[3]!, T0, options);
    expect(finished.next).toBeUndefined();
    expect(finished.transitions.map((t) => t.kind)).toEqual([
      "status_changed",
      "retried",
      "ended",
      "recovered",
    ]);
  });

  it("raises stuck once when an operation stays open past its action's threshold", () => {
    const [running] = recordsOf(["running"]);
    const early = observe(undefined, running!, T0 + 119_000, options);
    expect(early.transitions.map((t) => t.kind)).toEqual(["new"]);
    const late = observe(early.next, running!, T0 + 121_000, options);
    expect(late.transitions.map((t) => t.kind)).toEqual(["stuck"]);
    const later = observe(late.next, running!, T0 + 500_000, options);
    expect(later.transitions).toEqual([]);
  });
});
