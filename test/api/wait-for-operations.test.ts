import { describe, expect, it } from "vitest";
import type { Operation } from "../../src/contract/index.js";
import { operationOutcome, waitForOperations } from "../../src/api/wait-for-operations.js";
import { ManualClock, flushPromises } from "./support/virtual-clock.js";

const op = (id: string, status: string): Operation => ({
  id,
  project_id: "p-1",
  branch_id: "br-1",
  action: "start_compute",
  status,
  failures_count: 0,
  created_at: "2025-01-01T00:00:00Z",
  updated_at: "2025-01-01T00:00:00Z",
});

/** A fetcher whose answers the test scripts; it records every fetch. */
function scripted(statuses: Record<string, string[]>) {
  const fetched: string[] = [];
  const fetch = (id: string): Promise<Operation> => {
    fetched.push(id);
    const queue = statuses[id] ?? [];
    const status = queue.length > 1 ? (queue.shift() ?? "running") : (queue[0] ?? "running");
    return Promise.resolve(op(id, status));
  };
  return { fetched, fetch };
}

describe("operationOutcome", () => {
  it("follows the SDK: finished and skipped succeed; failed, error, cancelled fail", () => {
    expect(["finished", "skipped"].map(operationOutcome)).toEqual(["succeeded", "succeeded"]);
    expect(["failed", "error", "cancelled"].map(operationOutcome)).toEqual([
      "failed",
      "failed",
      "failed",
    ]);
    for (const status of [
      "scheduling",
      "running",
      "cancelling",
      "cancellation_pending",
      "brand_new",
    ]) {
      expect(operationOutcome(status)).toBe("pending");
    }
  });
});

describe("waitForOperations", () => {
  it("polls only open operations, each interval, until all have ended", async () => {
    const clock = new ManualClock();
    const { fetched, fetch } = scripted({ a: ["running", "finished"], c: ["failed"] });
    const result = waitForOperations(
      fetch,
      clock,
      [op("a", "running"), op("b", "skipped"), op("c", "scheduling")],
      {
        intervalMs: 1000,
      },
    );
    await flushPromises();
    expect(fetched).toEqual([]);
    await clock.advance(1000);
    expect(fetched).toEqual(["a", "c"]);
    await clock.advance(1000);
    expect(fetched).toEqual(["a", "c", "a"]);
    const { succeeded, failed, pending, timedOut } = await result;
    expect(succeeded.map((o) => o.id)).toEqual(["a", "b"]);
    expect(failed.map((o) => `${o.id}:${o.status}`)).toEqual(["c:failed"]);
    expect(pending).toEqual([]);
    expect(timedOut).toBe(false);
  });

  it("keeps polling unknown statuses until the timeout, then reports them pending", async () => {
    const clock = new ManualClock();
    const { fetched, fetch } = scripted({ a: ["mystery"] });
    const result = waitForOperations(fetch, clock, [op("a", "running")], {
      intervalMs: 1000,
      timeoutMs: 2500,
    });
    await clock.advance(3000);
    const { pending, timedOut } = await result;
    expect(fetched).toEqual(["a", "a", "a"]); // at 1000, 2000 and the deadline 2500
    expect(pending.map((o) => o.status)).toEqual(["mystery"]);
    expect(timedOut).toBe(true);
  });

  it("returns at once when nothing is open", async () => {
    const { fetched, fetch } = scripted({});
    const result = await waitForOperations(fetch, new ManualClock(), [op("a", "finished")]);
    expect(result.succeeded).toHaveLength(1);
    expect(fetched).toEqual([]);
  });

  it("stops waiting when the signal aborts", async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    const { fetch } = scripted({});
    const result = waitForOperations(fetch, clock, [op("a", "running")], {
      signal: controller.signal,
    });
    controller.abort(new Error("shutdown"));
    await expect(result).rejects.toThrow("shutdown");
  });
});
