/** Operations and projects through the client: paging, the iterator's stop rule, waiting. */
import { describe, expect, it } from "vitest";
import type { Operation, OperationsPage } from "../../src/contract/index.js";
import type { TestSimulator } from "../support/simulator.js";
import {
  simulatorAndClient,
  readyProject,
  whileAdvancing,
  type TestClient,
} from "./support/client.js";

let t: TestSimulator;
let c: TestClient;

simulatorAndClient((s) => ({ t, c } = s));

/** Scripts `count` operations on the primary branch, all in the current simulated second. */
async function scriptMany(projectId: string, branchId: string, count: number, status = "running") {
  const made: Operation[] = [];
  for (let i = 0; i < count; i++) {
    made.push(
      await t.sim.scriptOperation({
        project_id: projectId,
        branch_id: branchId,
        action: i % 2 === 0 ? "apply_config" : "tenant_attach",
        steps: [{ status, after_seconds: 0 }],
      }),
    );
  }
  return made;
}

async function collectPages(pages: AsyncIterable<OperationsPage>): Promise<OperationsPage[]> {
  const out: OperationsPage[] = [];
  for await (const page of pages) out.push(page);
  return out;
}

const listCalls = (from: number): number =>
  c.log.responses.slice(from).filter((e) => e.route === "listOperations").length;

describe("paging operations", () => {
  it("walks many operations created in one second, each exactly once, newest first", async () => {
    const { projectId, branchIds } = await readyProject(t);
    await scriptMany(projectId, branchIds[0] ?? "", 23);
    const truth = (await t.sim.truth(projectId)).map((o) => o.id);
    const sameSecond = (await t.sim.truth(projectId)).filter((o) => o.action === "tenant_attach");
    expect(new Set(sameSecond.map((o) => o.created_at)).size).toBe(1);

    for (const limit of [1, 4, 5, truth.length, truth.length + 1]) {
      const before = c.log.responses.length;
      const pages = await collectPages(c.api.operationPages(projectId, { limit }));
      expect(pages.flatMap((p) => p.operations.map((o) => o.id))).toEqual(truth);
      // Full pages, then one that is short or empty: floor(n / limit) + 1 requests.
      expect(listCalls(before)).toBe(Math.floor(truth.length / limit) + 1);
      expect(pages.every((p) => p.operations.length > 0)).toBe(true);
    }
  });

  it("stops on a short page although it carries a cursor, and resumes from a cursor", async () => {
    const { projectId, branchIds } = await readyProject(t);
    await scriptMany(projectId, branchIds[0] ?? "", 8);
    const first = await c.api.listOperations(projectId, { limit: 4 });
    expect(first.operations).toHaveLength(4);
    const cursor = first.pagination?.cursor ?? "";
    const rest = await collectPages(
      c.api.operationPages(projectId, { limit: 4, startCursor: cursor }),
    );
    const last = rest.at(-1);
    expect(last?.operations.length).toBeLessThan(4);
    expect(last?.pagination?.cursor).toBeDefined();
    const all = [...first.operations, ...rest.flatMap((p) => p.operations)].map((o) => o.id);
    expect(all).toEqual((await t.sim.truth(projectId)).map((o) => o.id));
  });

  it("passes unknown actions and statuses through", async () => {
    const { projectId, branchIds } = await readyProject(t);
    const [scripted] = await scriptMany(projectId, branchIds[0] ?? "", 1, "paused_for_lunch");
    const got = await c.api.getOperation(projectId, scripted?.id ?? "");
    expect(got).toMatchObject({ action: "apply_config", status: "paused_for_lunch" });
  });
});

describe("listing projects", () => {
  it("visits every project once, page by page", async () => {
    const created = [];
    for (let i = 0; i < 7; i++) created.push((await t.sim.createProject()).project.id);
    const before = c.log.responses.length;
    const seen: string[] = [];
    for await (const project of c.api.allProjects({ limit: 3 })) seen.push(project.id);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(created));
    const calls = c.log.responses.slice(before).filter((e) => e.route === "listProjects").length;
    expect(calls).toBe(Math.floor(seen.length / 3) + 1);
    const page = await c.api.listProjects({ limit: 2 });
    expect(page.projects).toHaveLength(2);
  });
});

describe("waitForOperations", () => {
  it("follows operations to their end and reports which failed", async () => {
    const { projectId, branchIds } = await readyProject(t);
    const script = (steps: { status: string; after_seconds: number; error?: string }[]) =>
      t.sim.scriptOperation({
        project_id: projectId,
        branch_id: branchIds[0] ?? "",
        action: "apply_config",
        steps,
      });
    const ok = await script([
      { status: "scheduling", after_seconds: 0 },
      { status: "running", after_seconds: 2 },
      { status: "finished", after_seconds: 4 },
    ]);
    const bad = await script([
      { status: "running", after_seconds: 0 },
      { status: "failed", after_seconds: 3, error: "disk on fire" },
    ]);
    const skipped = await script([{ status: "skipped", after_seconds: 0 }]);
    const cancelled = await script([
      { status: "cancelling", after_seconds: 0 },
      { status: "cancelled", after_seconds: 1 },
    ]);
    const before = c.log.responses.length;
    const result = await whileAdvancing(
      t.sim,
      c.api.waitForOperations(projectId, [ok, bad, skipped, cancelled], { intervalMs: 5 }),
    );
    expect(result.timedOut).toBe(false);
    expect(result.pending).toEqual([]);
    expect(result.succeeded.map((o) => [o.id, o.status])).toEqual([
      [ok.id, "finished"],
      [skipped.id, "skipped"],
    ]);
    expect(result.failed.map((o) => [o.id, o.status, o.error])).toEqual([
      [bad.id, "failed", "disk on fire"],
      [cancelled.id, "cancelled", undefined],
    ]);
    // Three open: a poll reads the log's newest page, not a get for each; one left: a get.
    const routes = c.log.responses.slice(before).map((e) => e.route);
    expect(routes[0]).toBe("listOperations");
    expect(routes.at(-1)).toBe("getOperation");
  });

  it("keeps polling an undocumented status until the timeout", async () => {
    const { projectId, branchIds } = await readyProject(t);
    const [odd] = await scriptMany(projectId, branchIds[0] ?? "", 1, "hibernating");
    const before = c.log.responses.length;
    const result = await c.api.waitForOperations(projectId, odd === undefined ? [] : [odd], {
      intervalMs: 20,
      timeoutMs: 200,
    });
    expect(result.timedOut).toBe(true);
    expect(result.pending.map((o) => o.status)).toEqual(["hibernating"]);
    const polls = c.log.responses.slice(before).filter((e) => e.route === "getOperation").length;
    expect(polls).toBeGreaterThanOrEqual(2);
  });
});
