/** Listing, paging and fetching operations (seed 4.1, 4.2; real API paging rules). */
import { describe, expect, test } from "vitest";
import { errorBodySchema, operationsPageSchema } from "../../src/contract/index.js";
import type { TestSimulator } from "../support/simulator.js";
import { simulatorWithProject } from "../support/simulator-suite.js";
import { expectStatus, getOperation, listPage, walkAll } from "./fixtures.js";
import { runsThen } from "../support/operation-steps.js";

let t: TestSimulator;
let projectId: string;
let branchId: string;

simulatorWithProject((s) => ({ t, projectId, branchId } = s), { each: true, advance: 10 });

async function script(count: number, action = "apply_config"): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const operation = await t.sim.scriptOperation({
      project_id: projectId,
      branch_id: branchId,
      action,
      steps: runsThen("finished", 1),
    });
    ids.push(operation.id);
  }
  return ids;
}

describe("paging", () => {
  test("hundreds of operations in one second page without a skip or a repeat", async () => {
    await script(300);
    const truth = (await t.sim.truth(projectId)).map((o) => o.id);
    const sameSecond = (await t.sim.truth(projectId)).filter(
      (o) => o.created_at === "2025-01-01T00:00:10Z",
    );
    expect(sameSecond).toHaveLength(300);
    for (const limit of [1, 7, 100, 1000]) {
      const walked = await walkAll(t, projectId, limit);
      expect(walked.map((o) => o.id)).toEqual(truth);
    }
  });

  test("newest first, by created_at", async () => {
    await script(3);
    await t.sim.advance(5);
    await script(3);
    const walked = await walkAll(t, projectId, 4);
    const created = walked.map((o) => Date.parse(o.created_at));
    expect(created).toEqual([...created].sort((a, b) => b - a));
  });

  test("operations arriving during a walk neither shift nor repeat the pages", async () => {
    await script(50);
    const before = (await t.sim.truth(projectId)).map((o) => o.id);
    const walked: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await listPage(t, projectId, 9, cursor);
      walked.push(...page.operations.map((o) => o.id));
      if (page.operations.length < 9) break;
      cursor = page.pagination?.cursor;
      // New operations land between pages, in the same second and in later ones.
      await script(3);
      await t.sim.advance(1);
    }
    expect(walked).toEqual(before);
  });

  test("the cursor is a microsecond timestamp and is on every page, the last one too", async () => {
    await script(5);
    const total = (await t.sim.truth(projectId)).length;
    const first = await listPage(t, projectId, total - 1);
    expect(first.pagination?.cursor).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const last = await listPage(t, projectId, 10, first.pagination?.cursor);
    expect(last.operations).toHaveLength(1);
    expect(last.pagination?.cursor).toBeDefined();
    const empty = await listPage(t, projectId, 10, last.pagination?.cursor);
    expect(empty.operations).toEqual([]);
    expect(empty.pagination?.cursor).toBe(last.pagination?.cursor);
  });

  test("an empty log still answers a page with a cursor", async () => {
    const empty = await t.sim.createProject({ plan: "free" });
    // A brand-new project has its creation operations; page past them.
    const page = await listPage(t, empty.project.id, 1000);
    const after = await listPage(t, empty.project.id, 1000, page.pagination?.cursor);
    expect(after).toEqual({ operations: [], pagination: page.pagination });
  });

  test("limit defaults to 10 and must be 1..1000", async () => {
    await script(20);
    const body = expectStatus(await t.api("GET", `/projects/${projectId}/operations`), 200);
    expect(operationsPageSchema.parse(body).operations).toHaveLength(10);
    expect((await listPage(t, projectId, 1)).operations).toHaveLength(1);
    const total = (await t.sim.truth(projectId)).length;
    expect((await listPage(t, projectId, 1000)).operations).toHaveLength(total);
    for (const bad of ["0", "1001", "-1", "1.5", "ten", ""]) {
      const result = await t.api("GET", `/projects/${projectId}/operations?limit=${bad}`);
      expect(result.status, bad).toBe(400);
      expect(errorBodySchema.parse(result.body).message).toMatch(/limit/);
    }
  });

  test("a cursor that is not one of the API's answers 400", async () => {
    for (const bad of ["abc", "2025-01-01", "2025-13-01T00:00:00.000000Z"]) {
      const result = await t.api(
        "GET",
        `/projects/${projectId}/operations?limit=5&cursor=${encodeURIComponent(bad)}`,
      );
      expect(result.status, bad).toBe(400);
    }
  });

  test("unknown project answers 404", async () => {
    const result = await t.api("GET", "/projects/no-such-project/operations?limit=5");
    expect(result.status).toBe(404);
    expect(errorBodySchema.parse(result.body).code).toBe("not_found");
  });
});

describe("get by id", () => {
  test("answers the record as the list shows it", async () => {
    const [id] = await script(1);
    const page = await listPage(t, projectId, 1);
    expect(page.operations[0]?.id).toBe(id);
    expect(await getOperation(t, projectId, id ?? "")).toEqual(page.operations[0]);
  });

  test("unknown operation, malformed id and another project's operation answer 404", async () => {
    const [id] = await script(1);
    const other = await t.sim.createProject({ plan: "paid" });
    for (const path of [
      `/projects/${projectId}/operations/00000000-0000-4000-8000-000000000000`,
      `/projects/${projectId}/operations/not-a-uuid`,
      `/projects/${other.project.id}/operations/${id ?? ""}`,
    ]) {
      expect((await t.api("GET", path)).status, path).toBe(404);
    }
  });
});
