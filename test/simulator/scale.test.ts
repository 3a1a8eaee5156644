/**
 * Scale: 10,000 projects and 1,000,000 operations in memory, one project holding half of
 * them; pages at both ends of the big log are correct. No wall-clock assertion: the point is
 * behaviour at size, and the memory footprint stays modest.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import type { OperationLog } from "../../src/simulator/model/operation-log.js";
import { toIsoMicros } from "../../src/simulator/time.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { getOperation, listPage } from "./fixtures.js";

let t: TestSimulator;
let bigId: string;
let log: OperationLog;
let memoryUsedMb: number;

const SMALL_PROJECTS = 9_999;
const SMALL_OPERATIONS = 50;
const BIG_OPERATIONS = 1_000_000 - SMALL_PROJECTS * SMALL_OPERATIONS;

function usedMb(): number {
  const usage = process.memoryUsage();
  return (usage.heapUsed + usage.arrayBuffers) / 1024 / 1024;
}

beforeAll(async () => {
  t = await startTestSimulator();
  const before = usedMb();
  const small = t.simulator.seedBulk({
    projects: SMALL_PROJECTS,
    operationsPerProject: SMALL_OPERATIONS,
  });
  // Half a million records over a day: about six per second, so seconds are full of ties.
  const big = t.simulator.seedBulk({ projects: 1, operationsPerProject: BIG_OPERATIONS });
  expect(small.operations + big.operations).toBe(1_000_000);
  bigId = big.projectIds[0] ?? "";
  const project = t.simulator.plane.world.project(bigId);
  if (project === undefined) throw new Error("big project missing");
  log = project.log;
  memoryUsedMb = usedMb() - before;
});

afterAll(async () => {
  await t.close();
});

test("the whole data set fits in a modest amount of memory", () => {
  expect(t.simulator.plane.world.projects).toHaveLength(10_000);
  expect(memoryUsedMb).toBeLessThan(400);
});

test("the newest page of the big log, and the next one, follow the log exactly", async () => {
  const first = await listPage(t, bigId, 1000);
  const expected = Array.from({ length: 1000 }, (_, k) => log.id(BIG_OPERATIONS - 1 - k));
  expect(first.operations.map((o) => o.id)).toEqual(expected);
  expect(first.pagination?.cursor).toBe(toIsoMicros(log.createdAt(BIG_OPERATIONS - 1000)));
  const second = await listPage(t, bigId, 1000, first.pagination?.cursor);
  expect(second.operations[0]?.id).toBe(log.id(BIG_OPERATIONS - 1001));
  expect(second.operations).toHaveLength(1000);
});

test("the oldest end of the big log: the last page, then an empty one", async () => {
  const cursor = toIsoMicros(log.createdAt(1000));
  const last = await listPage(t, bigId, 1000, cursor);
  expect(last.operations.map((o) => o.id)).toEqual(
    Array.from({ length: 1000 }, (_, k) => log.id(999 - k)),
  );
  const past = await listPage(t, bigId, 1000, last.pagination?.cursor);
  expect(past.operations).toEqual([]);
  expect(past.pagination?.cursor).toBe(last.pagination?.cursor);
});

test("a page in the middle splits a crowded second exactly at the cursor", async () => {
  const middle = Math.floor(BIG_OPERATIONS / 2);
  const page = await listPage(t, bigId, 10, toIsoMicros(log.createdAt(middle)));
  expect(page.operations.map((o) => o.id)).toEqual(
    Array.from({ length: 10 }, (_, k) => log.id(middle - 1 - k)),
  );
  const seconds = new Set(page.operations.map((o) => o.created_at));
  expect(seconds.size).toBeLessThan(10);
});

test("get by id in the big log, and pages of the small projects", async () => {
  const target = log.id(123_456);
  expect((await getOperation(t, bigId, target)).id).toBe(target);
  const projects = await t.api<{ projects: { id: string }[] }>("GET", "/projects?limit=400");
  const someSmall = projects.body.projects[17]?.id ?? "";
  expect((await listPage(t, someSmall, 1000)).operations).toHaveLength(SMALL_OPERATIONS);
});
