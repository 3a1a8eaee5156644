/**
 * The walk's rules for answers the simulator's faults do not produce (the end-to-end cases are in
 * `misbehaving-api.test.ts`): a cursor that climbs without repeating one, a full page without a
 * cursor from a source that does not check it, and where a run of records dated below the floor
 * ends the walk. `walkLog` is decision logic over a list function: here, pages of a script.
 */
import { describe, expect, it } from "vitest";
import type { Operation, OperationsPage } from "../../src/contract/index.js";
import { OLDER_RUN_LIMIT, WalkError, walkLog, type WalkParams } from "../../src/sync/walk.js";

const FLOOR_SECOND = Date.parse("2026-01-01T00:00:00Z") / 1000;

/** A record created `seconds` after the floor's second (negative: before it). */
function record(id: string, seconds: number): Operation {
  const at = new Date((FLOOR_SECOND + seconds) * 1000).toISOString().replace(".000Z", "Z");
  return {
    id,
    project_id: "p-1",
    action: "apply_config",
    status: "finished",
    failures_count: 0,
    created_at: at,
    updated_at: at,
  };
}

/** Serves `pages` in turn, whatever the cursor, and records the cursors asked for. */
function script(pages: OperationsPage[]) {
  const asked: (string | undefined)[] = [];
  const list = (_limit: number, cursor: string | undefined) => {
    asked.push(cursor);
    const page = pages[asked.length - 1];
    if (page === undefined) throw new Error("no more pages in the script");
    return Promise.resolve(page);
  };
  return { list, asked };
}

function walk(list: WalkParams["list"], limit: number) {
  const fresh: string[] = [];
  const anomalies: string[] = [];
  const result = walkLog({
    list,
    floor: { second: FLOOR_SECOND, ids: ["at-floor"] },
    known: new Set(),
    startCursor: undefined,
    firstPageLimit: limit,
    pageLimit: limit,
    maxPages: 20,
    visit: (r, _cursor, isFresh) => {
      if (isFresh) fresh.push(r.id);
    },
    anomaly: (kind, r) => anomalies.push(`${kind} ${r.id}`),
  });
  return { result, fresh, anomalies };
}

describe("the walk's own checks", () => {
  it("fails on a cursor that climbs back up the log, though it was never followed", async () => {
    const { list } = script([
      {
        operations: [record("n3", 30), record("n2", 20)],
        pagination: { cursor: "2026-01-01T00:00:20.000000Z" },
      },
      // Fetched with ...:20, it answers a cursor above it.
      {
        operations: [record("n1", 10), record("n0", 5)],
        pagination: { cursor: "2026-01-01T00:00:25.000000Z" },
      },
    ]);
    const error = await walk(list, 2).result.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WalkError);
    expect((error as WalkError).kind).toBe("cursor_not_descending");
    expect((error as WalkError).message).toMatch(/does not lie below the cursor/);
  });

  it("fails on a full page without a cursor, whatever the source checked", async () => {
    const { list } = script([{ operations: [record("n2", 20), record("n1", 10)] }]);
    const error = await walk(list, 2).result.catch((e: unknown) => e);
    expect((error as WalkError).kind).toBe("page_without_cursor");
  });
});

describe("a run of records dated below the floor", () => {
  it("is out of order, and fresh, when a new record follows it on a later page", async () => {
    const { list } = script([
      {
        operations: [record("n2", 20), record("old-dated-1", -9_000)],
        pagination: { cursor: "2026-01-01T00:00:19.000000Z" },
      },
      {
        operations: [record("old-dated-2", -9_001), record("n1", 10)],
        pagination: { cursor: "2026-01-01T00:00:09.000000Z" },
      },
      {
        operations: [record("at-floor", 0), record("older", -5)],
        pagination: { cursor: "2025-12-31T23:59:55.000000Z" },
      },
    ]);
    const { result, fresh, anomalies } = walk(list, 2);
    expect((await result).complete).toBe(true);
    expect(fresh).toEqual(["n2", "old-dated-1", "old-dated-2", "n1"]);
    expect(anomalies).toEqual([
      "out_of_order_record old-dated-1",
      "out_of_order_record old-dated-2",
    ]);
  });

  it(`ends the walk, as old, once it is ${OLDER_RUN_LIMIT} long with nothing new (the floor's records gone)`, async () => {
    const older = Array.from({ length: 50 }, (_, i) => record(`older-${i}`, -1 - i));
    const pages: OperationsPage[] = [];
    for (let i = 0; i < older.length; i += 10) {
      pages.push({
        operations: older.slice(i, i + 10),
        pagination: { cursor: `2025-12-31T23:${String(59 - i).padStart(2, "0")}:00.000000Z` },
      });
    }
    const { list, asked } = script([
      { operations: [record("n1", 10)], pagination: { cursor: "2026-01-01T00:00:10.000000Z" } },
      ...pages,
    ]);
    const { result, fresh, anomalies } = walk(list, 10);
    expect((await result).complete).toBe(true);
    expect(fresh).toEqual(["n1"]);
    expect(anomalies).toEqual([]);
    // The first page is short: the log ended there.
    expect(asked).toHaveLength(1);

    const long = script([
      { operations: [record("n1", 10), ...older.slice(0, 9)], pagination: { cursor: "c1" } },
      ...pages.slice(1),
    ]);
    const walked = walk(long.list, 10);
    expect((await walked.result).complete).toBe(true);
    expect(walked.fresh).toEqual(["n1"]);
    // Nine on the first page, ten on the second, the twentieth in a row on the third: it ends.
    expect(long.asked).toHaveLength(3);
  });
});
