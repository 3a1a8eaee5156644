import { describe, expect, it } from "vitest";
import type { Operation } from "../../src/contract/index.js";
import { WIRE_OPERATION } from "./support/wire-operation.js";
import {
  isStillWatched,
  observe,
  summarise,
  waitVerdict,
  type Watch,
} from "../../src/api/operation-watch.js";
import { isOpenMatch, readNextPage } from "../../src/api/operation-reads.js";

const op = (id: string, status: string, extra: Partial<Operation> = {}): Operation => ({
  ...WIRE_OPERATION,
  id,
  status,
  ...extra,
});

describe("observe", () => {
  it("reports the first record and each status change, not a record that repeats", () => {
    const first = observe(undefined, op("a", "running"), 0);
    expect(first.change).toEqual({ operation: op("a", "running"), from: undefined });
    expect(observe(first.watch, op("a", "running"), 10).change).toBeUndefined();
    expect(observe(first.watch, op("a", "finished"), 10).change?.from).toBe("running");
  });

  it("starts the retry grace when an operation fails, and again when a retry fails", () => {
    const running = observe(undefined, op("a", "running"), 0).watch;
    const failed = observe(running, op("a", "failed", { failures_count: 1 }), 100).watch;
    expect(failed.failedSinceMs).toBe(100);
    const still = observe(failed, op("a", "failed", { failures_count: 1 }), 500).watch;
    expect(still.failedSinceMs).toBe(100);
    const again = observe(still, op("a", "failed", { failures_count: 2 }), 900).watch;
    expect(again.failedSinceMs).toBe(900);
    expect(observe(again, op("a", "running"), 950).watch.failedSinceMs).toBeUndefined();
  });
});

describe("isStillWatched", () => {
  const watch = (status: string, failedSinceMs?: number): Watch => ({
    record: op("a", status),
    failedSinceMs,
  });

  it("watches open and undocumented statuses, never a final one", () => {
    for (const status of ["scheduling", "running", "cancelling", "hibernating"]) {
      expect(isStillWatched(watch(status), 0, 0)).toBe(true);
    }
    for (const status of ["finished", "skipped", "error", "cancelled"]) {
      expect(isStillWatched(watch(status), 0, 60_000)).toBe(false);
    }
  });

  it("watches a failed operation only within the retry grace", () => {
    expect(isStillWatched(watch("failed", 1000), 1000, 0)).toBe(false);
    expect(isStillWatched(watch("failed", 1000), 1999, 1000)).toBe(true);
    expect(isStillWatched(watch("failed", 1000), 2000, 1000)).toBe(false);
  });
});

describe("waitVerdict", () => {
  const verdict = (...statuses: string[]) =>
    waitVerdict(summarise(statuses.map((s, i) => ({ record: op(`o${i}`, s), failedSinceMs: 0 }))));

  it("succeeds when every operation finished or was skipped", () => {
    expect(verdict("finished", "skipped")).toBe("succeeded");
    expect(verdict()).toBe("succeeded");
  });

  it("fails when any ended failed, error or cancelled, even with others still open", () => {
    expect(verdict("finished", "failed")).toBe("failed");
    expect(verdict("error")).toBe("failed");
    expect(verdict("cancelled", "running")).toBe("failed");
  });

  it("times out when one is still open and none failed", () => {
    expect(verdict("finished", "running")).toBe("timed_out");
    expect(verdict("mystery")).toBe("timed_out");
  });
});

describe("readNextPage", () => {
  const created = new Map([
    ["old", 1_000],
    ["new", 5_000],
  ]);

  it("stops when nothing is missing or the page cap is reached", () => {
    expect(readNextPage([], created, 0, 1)).toBe(false);
    expect(readNextPage(["old"], created, 0, 2)).toBe(false);
  });

  it("goes on while a missing operation may lie further back", () => {
    expect(readNextPage(["old"], created, 2_000, 1)).toBe(true);
    expect(readNextPage(["unknown"], created, 2_000, 1)).toBe(true);
  });

  it("stops when every missing operation is newer than the page's oldest record", () => {
    expect(readNextPage(["new"], created, 2_000, 1)).toBe(false);
  });
});

describe("isOpenMatch", () => {
  it("keeps open operations on the branch or endpoint asked for", () => {
    const onEp = op("a", "running", { endpoint_id: "ep-1" });
    expect(isOpenMatch(onEp, {})).toBe(true);
    expect(isOpenMatch(onEp, { branchId: "br-1", endpointId: "ep-1" })).toBe(true);
    expect(isOpenMatch(onEp, { branchId: "br-2" })).toBe(false);
    expect(isOpenMatch(onEp, { endpointId: "ep-2" })).toBe(false);
    expect(isOpenMatch(op("b", "finished"), {})).toBe(false);
    expect(isOpenMatch(op("c", "failed"), {})).toBe(false);
  });
});
