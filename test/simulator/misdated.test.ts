/**
 * Records whose shown `created_at` is not their place in the log (clock skew, a server bug),
 * consistently on every read, and scripted records carrying hostile values. The ground truth
 * (`/_sim/truth`) stays what the API showed.
 */
import { describe, expect, test } from "vitest";
import type { Operation } from "../../src/contract/index.js";
import type { TruthOperation } from "../../src/simulator/index.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { simulatorWithProject } from "../support/simulator-suite.js";
import { getOperation, listPage, walkAll } from "./fixtures.js";
import { runsThen } from "../support/operation-steps.js";

let t: TestSimulator;
let projectId: string;
let branchId: string;

simulatorWithProject((s) => ({ t, projectId, branchId } = s), { each: true, advance: 10 });

const FUTURE = 2.5e9; // around 2104
const PAST = -4e9; // around 1898

async function script(offset?: number): Promise<Operation> {
  return t.sim.scriptOperation({
    project_id: projectId,
    branch_id: branchId,
    action: "apply_config",
    steps: runsThen("finished", 2),
    ...(offset === undefined ? {} : { created_at_offset_seconds: offset }),
  });
}

/** `created_at` as shown for a record really created at `atMicros` and shifted by `offset`. */
function shown(atMicros: string, offset: number): string {
  const seconds = Math.floor(Date.parse(atMicros) / 1000) + offset;
  return new Date(seconds * 1000).toISOString().slice(0, 19) + "Z";
}

/** The real creation instant of a record (microseconds ISO): its first status arrival. */
function realCreation(record: TruthOperation): string {
  return record.history[0]!.at;
}

describe("scripted created_at_offset_seconds", () => {
  test("list, get and truth show the shifted created_at; paging keeps the real order", async () => {
    await script();
    const future = await script(FUTURE);
    await script();
    await t.sim.advance(1);
    await script();
    const past = await script(PAST);
    await script();
    await t.sim.advance(5);
    const truth = await t.sim.truth(projectId);
    const byId = new Map(truth.map((o) => [o.id, o]));
    const futureTruth = byId.get(future.id)!;
    const pastTruth = byId.get(past.id)!;
    expect(futureTruth.created_at).toBe(shown(realCreation(futureTruth), FUTURE));
    expect(futureTruth.created_at.startsWith("2104-")).toBe(true);
    expect(pastTruth.created_at).toBe(shown(realCreation(pastTruth), PAST));
    expect(pastTruth.created_at.startsWith("1898-")).toBe(true);
    // The creation answer, get and every list page show the same.
    expect(future.created_at).toBe(futureTruth.created_at);
    for (const record of [futureTruth, pastTruth]) {
      const got = await getOperation(t, projectId, record.id);
      const { history: _history, ...asShown } = record;
      expect(got).toEqual(asShown);
      // updated_at and the duration stay real.
      expect(got.updated_at).toBe(shown(record.history.at(-1)!.at, 0));
      expect(got.total_duration_ms).toBe(2000);
    }
    // Paging: every record exactly once, in the log's (real) order, whatever the limit.
    const ids = truth.map((o) => o.id);
    for (const limit of [1, 2, 3, 7, 1000]) {
      const walked = await walkAll(t, projectId, limit);
      expect(walked.map((o) => o.id)).toEqual(ids);
      for (const record of walked) {
        const { history: _history, ...asShown } = byId.get(record.id)!;
        expect(record).toEqual(asShown);
      }
    }
  });

  test("a page ending on a misdated record has that record's real position as cursor", async () => {
    await script();
    const misdated = await script(FUTURE);
    await script();
    const truth = await t.sim.truth(projectId);
    const index = truth.findIndex((o) => o.id === misdated.id);
    const page = await listPage(t, projectId, index + 1);
    expect(page.operations.at(-1)?.id).toBe(misdated.id);
    expect(page.pagination?.cursor).toBe(realCreation(truth[index]!));
    const next = await listPage(t, projectId, 1, page.pagination?.cursor);
    expect(next.operations[0]?.id).toBe(truth[index + 1]?.id);
  });

  test("offsets are bounded (400 beyond about 1,584 years)", async () => {
    const body = {
      project_id: projectId,
      branch_id: branchId,
      action: "apply_config",
      steps: [{ status: "running", after_seconds: 0 }],
      created_at_offset_seconds: 6e10,
    };
    expect((await t.request("POST", "/_sim/operations", { body })).status).toBe(400);
  });
});

describe("the misdated fault", () => {
  test("misdates the next operations the model creates, count by count", async () => {
    const fault = await t.sim.addFault({ kind: "misdated", offset_seconds: FUTURE, count: 2 });
    expect(fault).toMatchObject({ kind: "misdated", offset_seconds: FUTURE, fired: 0 });
    // A new project creates two operations (its timeline, its compute's start): both hit.
    const other = await t.sim.createProject({ plan: "paid" });
    await t.sim.advance(10);
    const normal = await script();
    expect((await t.sim.listFaults())[0]?.fired).toBe(2);
    await t.sim.addFault({ kind: "misdated", offset_seconds: PAST, count: 1 });
    const past = await script();
    const truth = await t.sim.truth(other.project.id);
    expect(truth).toHaveLength(2);
    for (const record of truth) {
      expect(record.created_at).toBe(shown(realCreation(record), FUTURE));
      expect((await getOperation(t, other.project.id, record.id)).created_at).toBe(
        record.created_at,
      );
    }
    const own = await t.sim.truth(projectId);
    const normalTruth = own.find((o) => o.id === normal.id)!;
    expect(normalTruth.created_at).toBe(shown(realCreation(normalTruth), 0));
    const pastTruth = own.find((o) => o.id === past.id)!;
    expect(pastTruth.created_at).toBe(shown(realCreation(pastTruth), PAST));
    expect(past.created_at).toBe(pastTruth.created_at);
    const walked = await walkAll(t, other.project.id, 1);
    expect(walked.map((o) => o.created_at)).toEqual(truth.map((o) => o.created_at));
  });

  test("traffic included: a rate misdates a seeded share; truth and paging stay exact", async () => {
    const busy = await startTestSimulator({
      seed: 11,
      traffic: { projects: 4, operationsPerMinute: 60 },
    });
    try {
      await busy.sim.addFault({ kind: "misdated", offset_seconds: -86_400 * 365, rate: 0.3 });
      await busy.sim.advance(1200);
      const [fault] = await busy.sim.listFaults();
      expect(fault!.fired).toBeGreaterThan(5);
      const projects = await busy.api<{ projects: { id: string }[] }>("GET", "/projects");
      let misdated = 0;
      let total = 0;
      for (const { id } of projects.body.projects) {
        const truth = await busy.sim.truth(id);
        total += truth.length;
        for (const record of truth) {
          const real = shown(realCreation(record), 0);
          if (record.created_at !== real) {
            misdated++;
            expect(record.created_at).toBe(shown(realCreation(record), -86_400 * 365));
          }
        }
        const walked: string[] = [];
        let cursor: string | undefined;
        for (;;) {
          const query = `limit=7${cursor === undefined ? "" : `&cursor=${cursor}`}`;
          const page = await busy.api<{
            operations: TruthOperation[];
            pagination: { cursor: string };
          }>("GET", `/projects/${id}/operations?${query}`);
          walked.push(...page.body.operations.map((o) => o.id));
          if (page.body.operations.length < 7) break;
          cursor = page.body.pagination.cursor;
        }
        expect(walked).toEqual(truth.map((o) => o.id));
      }
      expect(misdated).toBe(fault!.fired);
      expect(misdated).toBeLessThan(total);
    } finally {
      await busy.close();
    }
  });
});

describe("hostile scripted records", () => {
  test("any action, any status, a long error: shown as sent, the truth kept right", async () => {
    const action = `"weird" action <script>\u0000\n✓ ${"x".repeat(100_000)}`;
    const error = `storage said: ${"é".repeat(1_000_000)}`;
    const op = await t.sim.scriptOperation({
      project_id: projectId,
      branch_id: branchId,
      action,
      steps: [
        { status: "frobnicating", after_seconds: 0 },
        { status: "Not A Status ✓", after_seconds: 1 },
        { status: "failed", after_seconds: 2, error },
        { status: "RUNNING ", after_seconds: 3 },
        { status: "error", after_seconds: 4, error: "short" },
      ],
    });
    expect(op).toMatchObject({ action, status: "frobnicating", failures_count: 0 });
    await t.sim.advance(1);
    expect((await getOperation(t, projectId, op.id)).status).toBe("Not A Status ✓");
    await t.sim.advance(1);
    const failed = await getOperation(t, projectId, op.id);
    expect(failed).toMatchObject({ status: "failed", failures_count: 1 });
    expect(failed.error).toBe(error);
    await t.sim.advance(1);
    // Not a retry (the status is not `running`): no retry_at, no error shown.
    const odd = await getOperation(t, projectId, op.id);
    expect(odd).toMatchObject({ status: "RUNNING ", failures_count: 1 });
    expect(odd.retry_at).toBeUndefined();
    expect(odd.error).toBeUndefined();
    await t.sim.advance(1);
    const truth = (await t.sim.truth(projectId)).find((o) => o.id === op.id)!;
    expect(truth).toMatchObject({ action, status: "error", failures_count: 2, error: "short" });
    expect(truth.history.map((h) => [h.status, h.failures_count])).toEqual([
      ["frobnicating", 0],
      ["Not A Status ✓", 0],
      ["failed", 1],
      ["RUNNING ", 1],
      ["error", 2],
    ]);
    const { history: _history, ...asShown } = truth;
    expect((await listPage(t, projectId, 1)).operations[0]).toEqual(asShown);
  });

  test("a failure arriving with the record carries its error from the start", async () => {
    const op = await t.sim.scriptOperation({
      project_id: projectId,
      branch_id: branchId,
      action: "x",
      steps: [{ status: "failed", after_seconds: 0, error: "born broken" }],
    });
    expect(op).toMatchObject({ status: "failed", failures_count: 1, error: "born broken" });
  });

  test("empty values and texts over 1 MiB are refused", async () => {
    const base = { project_id: projectId, branch_id: branchId, action: "apply_config" };
    for (const body of [
      { ...base, action: "", steps: [{ status: "running", after_seconds: 0 }] },
      { ...base, steps: [{ status: "", after_seconds: 0 }] },
      { ...base, steps: [{ status: "failed", after_seconds: 0, error: "" }] },
      {
        ...base,
        steps: [{ status: "failed", after_seconds: 0, error: "x".repeat(1024 * 1024 + 1) }],
      },
    ]) {
      expect((await t.request("POST", "/_sim/operations", { body })).status).toBe(400);
    }
  });
});
