import { describe, expect, it } from "vitest";
import type { Operation } from "../../src/contract/index.js";
import { WIRE_OPERATION } from "./support/wire-operation.js";
import { operationOutcome } from "../../src/api/operation-watch.js";
import { waitForOperations } from "../../src/api/wait-for-operations.js";
import { ManualClock, flushPromises } from "./support/virtual-clock.js";

const op = (id: string, status: string): Operation => ({
  ...WIRE_OPERATION,
  id,
  status,
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

  it("stops waiting when the signal aborts, with what it read so far", async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    const { fetch } = scripted({});
    const result = waitForOperations(fetch, clock, [op("a", "running"), op("b", "finished")], {
      signal: controller.signal,
    });
    controller.abort(new Error("shutdown"));
    const { succeeded, pending, interrupted, timedOut } = await result;
    expect(succeeded.map((o) => o.id)).toEqual(["b"]);
    expect(pending.map((o) => o.id)).toEqual(["a"]);
    expect(interrupted).toBe(true);
    expect(timedOut).toBe(false);
  });
});

describe("waitForOperations with a retry grace", () => {
  it("keeps reading a failed operation within the grace and follows its retry", async () => {
    const clock = new ManualClock();
    const { fetched, fetch } = scripted({ a: ["failed", "running", "finished"] });
    const changes: string[] = [];
    const result = waitForOperations(fetch, clock, [op("a", "running")], {
      intervalMs: 1000,
      retryGraceMs: 5000,
      onStatus: (c) => changes.push(`${c.from ?? "-"}>${c.operation.status}`),
    });
    await clock.advance(3000);
    const { succeeded, failed } = await result;
    expect(fetched).toEqual(["a", "a", "a"]);
    expect(changes).toEqual(["->running", "running>failed", "failed>running", "running>finished"]);
    expect(succeeded.map((o) => o.status)).toEqual(["finished"]);
    expect(failed).toEqual([]);
  });

  it("lets a failed operation go once the grace has run out", async () => {
    const clock = new ManualClock();
    const { fetched, fetch } = scripted({ a: ["failed"] });
    const result = waitForOperations(fetch, clock, [op("a", "running")], {
      intervalMs: 1000,
      retryGraceMs: 2000,
    });
    await clock.advance(10_000);
    const { failed, timedOut } = await result;
    expect(fetched).toEqual(["a", "a", "a"]); // failed at 1000, read at 2000 and 3000
    expect(failed.map((o) => o.status)).toEqual(["failed"]);
    expect(timedOut).toBe(false);
  });
});
