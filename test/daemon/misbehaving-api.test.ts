/**
 * The whole exporter in-process against a simulator that misbehaves for some projects (invariant 7,
 * docs/design.md): answers that drip, answers too large to read, records that claim another project
 * or carry unbounded values. The misbehaving projects show as down, with the reason on the status
 * page; the others keep being polled and counted as if nothing happened.
 */
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { DOCUMENTED_OPERATION_ACTIONS } from "../../src/contract/index.js";
import { PROJECT_FAILING } from "../../src/daemon/step-effects.js";
import { startRewritingProxy } from "../support/rewriting-proxy.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { startTestExporter, tempDir, waitFor, type TestExporter } from "./support.js";
import { runsThen } from "../support/operation-steps.js";

let sim: TestSimulator;

beforeAll(async () => {
  sim = await startTestSimulator({ startTime: new Date(Date.now() - 60_000) });
});
afterAll(async () => {
  await sim.close();
});

async function project(): Promise<{ id: string; branch: string }> {
  const created = await sim.sim.createProject({ plan: "paid", availability_checks: false });
  return { id: created.project.id, branch: created.branches[0]?.id ?? "" };
}

/** An exporter on the simulator with its own state directory; `raw` is merged over it. */
async function exporter(
  ctx: TestContext,
  raw: { api?: Record<string, unknown> } & Record<string, unknown>,
): Promise<TestExporter> {
  const e = await startTestExporter({
    ...raw,
    api: { url: sim.apiUrl, key: sim.apiKey, ...raw.api },
    state: { dir: await tempDir() },
  });
  ctx.onTestFinished(() => e.stop());
  return e;
}

/** Scripts operations of these actions (or `count` of apply_config), finished a second later. */
async function finish(p: { id: string; branch: string }, actions: number | readonly string[]) {
  const list =
    typeof actions === "number" ? Array.from({ length: actions }, () => "apply_config") : actions;
  for (const action of list) {
    await sim.sim.scriptOperation({
      project_id: p.id,
      branch_id: p.branch,
      action,
      steps: runsThen("finished", 1),
    });
  }
  await sim.sim.advance(2);
}

/** Waits until every project has committed a poll (its checkpoint is set). */
async function allCommitted(e: TestExporter, ids: readonly string[]): Promise<void> {
  await waitFor("every project's first poll", async () => {
    const samples = await e.samples();
    return ids.every((id) =>
      samples.some(
        (s) => s.name === "pgcp_project_last_success_timestamp_seconds" && s.labels.project === id,
      ),
    );
  });
}

describe("answers that drip or are too large", () => {
  it("keeps polling every other project while as many projects as request slots drip their answers", async (ctx) => {
    const dripping = await Promise.all(Array.from({ length: 8 }, () => project()));
    const healthy = await Promise.all(Array.from({ length: 2 }, () => project()));
    const ids = [...dripping, ...healthy].map((p) => p.id);
    // 8 request slots (the default), a 1 s deadline for a whole exchange; the dripping projects
    // back off, to a few seconds at most here.
    const e = await exporter(ctx, {
      projects: ids,
      api: { timeout: 1, concurrency: 8 },
      poll: { errorBackoffMax: 3 },
    });
    await allCommitted(e, ids);
    // A byte every 50 ms: never silent for a second, never done.
    for (const p of dripping) {
      await sim.sim.addFault({ project_id: p.id, kind: "drip", drip_interval_ms: 50 });
    }
    ctx.onTestFinished(async () => {
      await sim.sim.clearFaults();
    });
    await waitFor("the dripping projects to be down", async () => {
      const samples = await e.samples();
      return dripping.every((p) =>
        samples.some(
          (s) => s.name === "pgcp_project_up" && s.labels.project === p.id && s.value === 0,
        ),
      );
    });
    // Meanwhile the healthy projects are polled and counted, again and again.
    for (let round = 1; round <= 3; round++) {
      for (const p of healthy) await finish(p, 2);
      for (const p of healthy) {
        await waitFor(`round ${round} counted for ${p.id}`, async () => {
          const n = await e.value("pgcp_operations_total", {
            project: p.id,
            action: "apply_config",
            status: "finished",
          });
          return n === 2 * round;
        });
      }
    }
    for (const p of healthy) expect(await e.value("pgcp_project_up", { project: p.id })).toBe(1);
    // The status page says which projects fail and why.
    const page = await e.get("/");
    expect(page.text).toContain(dripping[0]?.id);
    expect(page.text).toMatch(/did not complete within its deadline of 1000 ms/);
    const failed = e.logs
      .lines()
      .filter((l) => l.msg === PROJECT_FAILING && l.project === dripping[0]?.id);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ level: "warn", reason: "timeout" });
    expect(JSON.stringify(failed[0])).toContain("DEADLINE_EXCEEDED");
    // Once the answers are whole again, so are the projects.
    await sim.sim.clearFaults();
    await waitFor("the dripping projects to be up again", async () => {
      const samples = await e.samples();
      return dripping.every((p) =>
        samples.some(
          (s) => s.name === "pgcp_project_up" && s.labels.project === p.id && s.value === 1,
        ),
      );
    });
  });

  it("fails a poll whose answer is over the size cap at once, and counts exactly once it is not", async (ctx) => {
    const p = await project();
    const e = await exporter(ctx, {
      projects: [p.id],
      poll: { errorBackoffMax: 3 },
    });
    await allCommitted(e, [p.id]);
    await finish(p, 3);
    await sim.sim.addFault({ project_id: p.id, kind: "oversized", size_bytes: 50_000_000 });
    ctx.onTestFinished(async () => {
      await sim.sim.clearFaults();
    });
    await waitFor("the poll to fail on the size", () =>
      e.logs
        .lines()
        .some(
          (l) =>
            l.msg === PROJECT_FAILING &&
            l.reason === "invalid_response" &&
            JSON.stringify(l).includes("response_too_large"),
        ),
    );
    expect(await e.value("pgcp_project_up", { project: p.id })).toBe(0);
    expect(
      await e.value("pgcp_operations_total", { project: p.id, action: "apply_config" }),
    ).toBeUndefined();
    await sim.sim.clearFaults();
    await waitFor("the operations to be counted", async () => {
      const n = await e.value("pgcp_operations_total", {
        project: p.id,
        action: "apply_config",
        status: "finished",
      });
      return n === 3;
    });
  });
});

describe("records that claim too much", () => {
  it("counts a record that claims another project for the project whose log was read", async (ctx) => {
    const p = await project();
    const other = await project();
    const e = await exporter(ctx, {
      projects: [p.id, other.id],
    });
    await allCommitted(e, [p.id, other.id]);
    await sim.sim.addFault({ project_id: p.id, kind: "foreign_project" });
    ctx.onTestFinished(async () => {
      await sim.sim.clearFaults();
    });
    await finish(p, ["create_branch", "create_branch", "create_branch", "create_branch"]);
    await waitFor("the operations to be counted", async () => {
      const n = await e.value("pgcp_operations_total", {
        project: p.id,
        action: "create_branch",
        status: "finished",
      });
      return n === 4;
    });
    expect(
      await e.value("pgcp_operations_total", { project: other.id, action: "create_branch" }),
    ).toBeUndefined();
    expect(
      await e.value("pgcp_api_anomalies_total", { project: p.id, kind: "foreign_project" }),
    ).toBe(4);
    expect(
      e.logs
        .lines()
        .some((l) => l.anomaly === "foreign_project" && l.project === p.id && l.count === 4),
    ).toBe(true);
  });

  it("bounds label values: 300 distinct unknown actions add at most the limit, a huge one none", async (ctx) => {
    const p = await project();
    const e = await exporter(ctx, {
      projects: [p.id],
      metrics: { maxUnknownValues: 5 },
    });
    await allCommitted(e, [p.id]);
    await finish(p, [
      ...Array.from({ length: 300 }, (_, i) => `mystery_${i}`),
      "y".repeat(200_000),
    ]);
    // The project's own operations (its compute starting) are documented actions.
    const undocumented = async () =>
      (await e.samples()).filter(
        (s) =>
          s.name === "pgcp_operations_total" &&
          s.labels.project === p.id &&
          !DOCUMENTED_OPERATION_ACTIONS.includes(s.labels.action ?? ""),
      );
    await waitFor("all 301 to be counted", async () => {
      return (await undocumented()).reduce((n, s) => n + s.value, 0) === 301;
    });
    const actions = new Set((await undocumented()).map((s) => s.labels.action));
    // Five undocumented actions, and `other` for the rest.
    expect(actions.size).toBe(6);
    expect(actions).toContain("other");
    expect(
      await e.value("pgcp_operations_total", {
        project: p.id,
        action: "other",
        status: "finished",
      }),
    ).toBe(296);
    const longest = Math.max(...[...actions].map((a) => a?.length ?? 0));
    expect(longest).toBeLessThanOrEqual(64);
  });

  it("follows an operation in an undocumented status as open, not as ended", async (ctx) => {
    const p = await project();
    const e = await exporter(ctx, {
      projects: [p.id],
    });
    await allCommitted(e, [p.id]);
    await sim.sim.scriptOperation({
      project_id: p.id,
      branch_id: p.branch,
      action: "apply_config",
      steps: runsThen("frobnicating", 1),
    });
    await sim.sim.advance(2);
    await waitFor("the operation to be open in its undocumented status", async () => {
      const n = await e.value("pgcp_operations_open", {
        project: p.id,
        action: "apply_config",
        status: "frobnicating",
      });
      return n === 1;
    });
    expect(
      await e.value("pgcp_operations_total", { project: p.id, action: "apply_config" }),
    ).toBeUndefined();
  });
});

describe("a projects list with entries that are not projects", () => {
  it("watches every usable project and skips the others with a warning", async (ctx) => {
    const projects = [await project(), await project()];
    // Behind a proxy that adds two broken entries to every page of the projects list.
    const proxy = await startRewritingProxy(sim.apiUrl, (path, body) => {
      if (!path.endsWith("/projects")) return undefined;
      const page = body as { projects: unknown[] };
      return {
        ...page,
        projects: [{ id: "Not_A_Project!", name: "broken" }, ...page.projects, { name: "no id" }],
      };
    });
    ctx.onTestFinished(() => proxy.close());
    const e = await exporter(ctx, { api: { url: proxy.apiUrl }, projects: "all" });
    await allCommitted(
      e,
      projects.map((p) => p.id),
    );
    const skipped = e.logs
      .lines()
      .filter((l) => l.msg.startsWith("project discovery skipped an entry"));
    expect(skipped.map((l) => l.project)).toEqual(['"Not_A_Project!"', "(none)"]);
    expect(String(skipped[0]?.problem)).toContain("id:");
    expect(e.exporter.daemon.projects()).toEqual(expect.arrayContaining(projects.map((p) => p.id)));
    expect(e.exporter.daemon.projects()).not.toContain("Not_A_Project!");
  });
});
