/**
 * The `failed_operations` fault: operations of one action (in one region, or one project) fail
 * as the model runs them, each with the fault's error text, its ids and a number filled in. It
 * draws from the seeded fault stream only while it is live and matches.
 */
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { errorBodySchema } from "../../src/contract/index.js";
import {
  DEFAULT_REGION_ID,
  REGION_IDS,
  type SimFaultRequest,
  type TruthOperation,
} from "../../src/simulator/index.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { runsThen } from "../support/operation-steps.js";
import { endpointCall, getEndpoint, operationsWithAction } from "./fixtures.js";

let t: TestSimulator;

beforeEach(async () => {
  t = await startTestSimulator();
});

afterEach(async () => {
  await t.close();
});

const EU = "aws-eu-central-1";
const QUORUM = "safekeeper quorum not reached for endpoint {endpoint_id} (sk-{n})";

interface Compute {
  readonly projectId: string;
  readonly branchId: string;
  readonly endpointId: string;
}

/**
 * `count` new projects in `regionId`, with their read-write endpoints. After `waitForSuspend`
 * their computes have started and auto-suspended (the start finishes 4 s after creation, the
 * suspend 300 s later and takes 1 s): a connection to each then wakes it with a start_compute.
 */
async function suspendedComputes(count: number, regionId: string): Promise<Compute[]> {
  const computes: Compute[] = [];
  for (let i = 0; i < count; i++) {
    const created = await t.sim.createProject({ region_id: regionId });
    const endpoint = created.endpoints[0];
    if (endpoint === undefined) throw new Error("project has no endpoint");
    computes.push({
      projectId: created.project.id,
      branchId: endpoint.branch_id,
      endpointId: endpoint.id,
    });
  }
  return computes;
}

/** Moves the clock past the start and the auto-suspend of computes created just before. */
async function waitForSuspend(): Promise<void> {
  await t.sim.advance(310);
}

/** The newest start_compute of a project (from the ground truth). */
async function lastStart(compute: Compute): Promise<TruthOperation> {
  const [start] = (await t.sim.truth(compute.projectId)).filter(
    (o) => o.action === "start_compute",
  );
  if (start === undefined) throw new Error(`no start_compute in ${compute.projectId}`);
  return start;
}

/** A failure text with its ids and numbers taken out: what a platform incident groups by. */
function normalised(text: string): string {
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>")
    .replace(/\b(?:ep-|br-)?[a-z]+-[a-z]+-\d+\b/g, "<id>")
    .replace(/\d+/g, "<n>");
}

describe("failed_operations", () => {
  test("fails start_compute only in its region, with texts equal once ids are taken out", async () => {
    const eu = await suspendedComputes(15, EU);
    const us = await suspendedComputes(15, DEFAULT_REGION_ID);
    await waitForSuspend();
    const fault = await t.sim.addFault({
      kind: "failed_operations",
      action: "start_compute",
      region_id: EU,
      error: QUORUM,
    });
    expect(fault).toMatchObject({ kind: "failed_operations", region_id: EU, fired: 0 });
    // Connections wake every compute (half of them through the API's start call instead).
    for (const [i, c] of [...eu, ...us].entries()) {
      const woken =
        i % 2 === 0
          ? await t.sim.connect(c.endpointId)
          : await endpointCall(
              t,
              "POST",
              `/projects/${c.projectId}/endpoints/${c.endpointId}/start`,
              200,
            );
      expect(woken.operations.map((o) => [o.action, o.status])).toEqual([
        ["start_compute", "running"],
      ]);
    }
    await t.sim.advance(2);
    const texts: string[] = [];
    for (const c of eu) {
      const start = await lastStart(c);
      expect(start).toMatchObject({ status: "failed", failures_count: 1, total_duration_ms: 2000 });
      expect(start.error).toBeDefined();
      texts.push(start.error ?? "");
      expect(start.error).toContain(c.endpointId);
      const endpoint = await getEndpoint(t, c.projectId, c.endpointId);
      expect(endpoint.current_state).toBe("idle");
      expect(endpoint.pending_state).toBeUndefined();
    }
    for (const c of us) {
      expect(await lastStart(c)).toMatchObject({ status: "finished", failures_count: 0 });
      expect((await getEndpoint(t, c.projectId, c.endpointId)).current_state).toBe("active");
    }
    expect(new Set(texts).size).toBe(eu.length);
    expect(new Set(texts.map(normalised))).toEqual(
      new Set(["safekeeper quorum not reached for endpoint <id> (sk-<n>)"]),
    );
    expect((await t.sim.listFaults())[0]?.fired).toBe(eu.length);
    // Not retried: still failed a minute later, one failure, the error kept.
    await t.sim.advance(60);
    const later = await lastStart(eu[0]!);
    expect(later.history.map((h) => h.status)).toEqual(["running", "failed"]);
    expect(later).toMatchObject({ status: "failed", failures_count: 1 });
    // Cleared: the next connection starts the compute.
    expect(await t.sim.clearFaults()).toBe(1);
    await t.sim.connect(eu[0]!.endpointId);
    await t.sim.advance(2);
    expect(await lastStart(eu[0]!)).toMatchObject({ status: "finished" });
    expect((await getEndpoint(t, eu[0]!.projectId, eu[0]!.endpointId)).current_state).toBe(
      "active",
    );
  });

  test("every placeholder is filled in; other actions and scripted operations are untouched", async () => {
    const [c] = await suspendedComputes(1, EU);
    await waitForSuspend();
    await t.sim.addFault({
      kind: "failed_operations",
      action: "start_compute",
      error: "{project_id}/{branch_id}/{endpoint_id}/{operation_id}/{n}/{unknown}",
    });
    const woken = await t.sim.connect(c!.endpointId);
    const [start] = woken.operations;
    const scripted = await t.sim.scriptOperation({
      project_id: c!.projectId,
      branch_id: c!.branchId,
      action: "start_compute",
      steps: runsThen("finished", 2),
    });
    await t.sim.advance(2);
    const truth = await t.sim.truth(c!.projectId);
    const failed = truth.find((o) => o.id === start!.id)!;
    expect(failed).toMatchObject({ status: "failed", failures_count: 1 });
    const [project, branch, endpoint, operation, n, rest] = (failed.error ?? "").split("/");
    expect([project, branch, endpoint, operation]).toEqual([
      c!.projectId,
      c!.branchId,
      c!.endpointId,
      start!.id,
    ]);
    expect(n).toMatch(/^\d{1,5}$/);
    expect(rest).toBe("{unknown}");
    expect(truth.find((o) => o.id === scripted.id)).toMatchObject({ status: "finished" });
    // The suspend before it and the project's creation finished as usual.
    for (const o of truth.filter((o) => o.action !== "start_compute")) {
      expect(o.status).toBe("finished");
    }
    expect((await t.sim.listFaults())[0]?.fired).toBe(1);
  });

  test("count spends it; project_id narrows it to one project", async () => {
    const computes = await suspendedComputes(4, EU);
    await waitForSuspend();
    await t.sim.addFault({
      kind: "failed_operations",
      action: "start_compute",
      region_id: EU,
      error: "storage controller unavailable (attempt {n})",
      count: 2,
    });
    await t.sim.addFault({
      kind: "failed_operations",
      action: "start_compute",
      project_id: computes[3]!.projectId,
      error: "compute pod evicted",
    });
    for (const c of computes) await t.sim.connect(c.endpointId);
    await t.sim.advance(2);
    const statuses = [];
    for (const c of computes) statuses.push((await lastStart(c)).error ?? "finished");
    expect(statuses.map((s) => s.replace(/\d+/g, "<n>"))).toEqual([
      "storage controller unavailable (attempt <n>)",
      "storage controller unavailable (attempt <n>)",
      "finished",
      "compute pod evicted",
    ]);
    expect((await t.sim.listFaults()).map((f) => f.fired)).toEqual([2, 1]);
  });

  test("a project created while it is live fails its first start; the endpoint ends idle", async () => {
    await t.sim.addFault({
      kind: "failed_operations",
      action: "start_compute",
      error: "no quorum",
    });
    const created = await t.sim.createProject({ region_id: EU });
    await t.sim.advance(10);
    const [start] = await operationsWithAction(t, created.project.id, "start_compute");
    expect(start).toMatchObject({ status: "failed", error: "no quorum", failures_count: 1 });
    const endpoint = await getEndpoint(t, created.project.id, created.endpoints[0]!.id);
    expect(endpoint.current_state).toBe("idle");
    expect(endpoint.pending_state).toBeUndefined();
  });

  test("invalid specs answer 400 naming the field", async () => {
    const base = { kind: "failed_operations", action: "start_compute", error: "x" };
    const cases: [unknown, RegExp][] = [
      [{ kind: "failed_operations", error: "x" }, /action: a failed_operations fault needs action/],
      [
        { kind: "failed_operations", action: "start_compute" },
        /error: a failed_operations fault needs error/,
      ],
      [{ ...base, region_id: "aws-mars-1" }, /region_id: unknown region aws-mars-1/],
      [{ ...base, route: "listOperations" }, /route does not apply to failed_operations/],
      [{ ...base, method: "GET" }, /method/],
      [{ ...base, offset_seconds: 5 }, /offset_seconds applies to kind misdated only/],
      [{ ...base, action: "" }, /action/],
      [
        { kind: "status", action: "start_compute" },
        /action applies to kind failed_operations only/,
      ],
      [{ kind: "misdated", offset_seconds: 5, error: "x" }, /error/],
    ];
    for (const [body, message] of cases) {
      const result = await t.request("POST", "/_sim/faults", { body });
      expect(result.status, JSON.stringify(body)).toBe(400);
      expect(errorBodySchema.parse(result.body).message, JSON.stringify(body)).toMatch(message);
    }
    const refused = await t.request("POST", "/_sim/faults", { body: { ...base, region_id: "x" } });
    for (const id of REGION_IDS) expect(errorBodySchema.parse(refused.body).message).toContain(id);
    expect(await t.sim.listFaults()).toEqual([]);
  });
});

describe("failed_operations and generated traffic", () => {
  test("every start_compute the traffic runs fails; nothing else does", async () => {
    const busy = await startTestSimulator({
      seed: 5,
      traffic: { projects: 4, operationsPerMinute: 60, failureShare: 0, cancellationShare: 0 },
    });
    try {
      await busy.sim.addFault({
        kind: "failed_operations",
        action: "start_compute",
        region_id: DEFAULT_REGION_ID,
        error: "safekeeper quorum not reached (sk-{n})",
      });
      await busy.sim.advance(900);
      let hit = 0;
      for (const projectId of await busy.sim.trafficProjects()) {
        for (const record of await busy.sim.truth(projectId)) {
          const statuses = record.history.map((h) => h.status);
          if (record.action !== "start_compute") {
            expect(record.status, JSON.stringify(record)).not.toBe("failed");
            continue;
          }
          // Queued behind a failed operation, a start is skipped; every one that ran failed
          // (or is still running at the end).
          if (!statuses.includes("running")) {
            expect(["skipped", "scheduling"]).toContain(record.status);
            continue;
          }
          hit++;
          if (record.status === "running") continue;
          expect(statuses.slice(-2)).toEqual(["running", "failed"]);
          expect(record).toMatchObject({ status: "failed", failures_count: 1 });
          expect(record.error).toMatch(/^safekeeper quorum not reached \(sk-\d+\)$/);
        }
      }
      expect(hit).toBeGreaterThan(4);
      expect((await busy.sim.listFaults())[0]?.fired).toBe(hit);
    } finally {
      await busy.close();
    }
  });
});

describe("failed_operations under a seed", () => {
  /**
   * Under `faults`, restarts one compute 30 times and reads the project's operations list once
   * after each, under a `no_pagination` fault at rate 0.5 (it draws from the same stream).
   * Returns which list answers lost their pagination, and the texts of the failed operations.
   */
  async function run(
    faults: readonly SimFaultRequest[],
  ): Promise<{ hits: boolean[]; failures: string[] }> {
    const local = await startTestSimulator({ seed: 7 });
    try {
      const created = await local.sim.createProject({ region_id: DEFAULT_REGION_ID });
      const projectId = created.project.id;
      const path = `/projects/${projectId}/endpoints/${created.endpoints[0]!.id}`;
      await local.sim.advance(5);
      for (const fault of faults) await local.sim.addFault(fault);
      await local.sim.addFault({ kind: "no_pagination", route: "listOperations", rate: 0.5 });
      const hits: boolean[] = [];
      for (let i = 0; i < 30; i++) {
        // A restart suspends an active compute and starts it; one left idle by a failed start
        // is just started.
        const restarted = await local.api("POST", `${path}/restart`);
        expect(restarted.status, restarted.text).toBe(200);
        await local.sim.advance(4);
        const answer = await local.api<Record<string, unknown>>(
          "GET",
          `/projects/${projectId}/operations?limit=1`,
        );
        hits.push(!("pagination" in answer.body));
      }
      const failures = (await local.sim.truth(projectId))
        .filter((o) => o.status === "failed")
        .map((o) => o.error ?? "");
      return { hits, failures };
    } finally {
      await local.close();
    }
  }

  const failing = { kind: "failed_operations", action: "start_compute", rate: 0.5 } as const;

  test("a rate fails the same operations with the same texts under the same seed", async () => {
    const first = await run([{ ...failing, error: "sk-{n} down" }]);
    expect(await run([{ ...failing, error: "sk-{n} down" }])).toEqual(first);
    expect(first.failures.length).toBeGreaterThan(3);
    expect(first.failures.length).toBeLessThan(27);
    expect(new Set(first.failures).size).toBeGreaterThan(1);
  });

  test("a fault that is spent, or matches no operation, draws nothing", async () => {
    const baseline = await run([]);
    const idle = await run([
      // Spent by the first start, without a draw (no rate, no {n}).
      { kind: "failed_operations", action: "start_compute", error: "once", count: 1 },
      // Other region, other action: never checked against these operations.
      { ...failing, region_id: "aws-eu-central-1", error: "elsewhere {n}" },
      { ...failing, action: "apply_storage_config", error: "other action {n}" },
    ]);
    expect(idle.hits).toEqual(baseline.hits);
    expect(idle.failures).toEqual(["once"]);
    // A live matching fault draws: the request faults see another stream.
    const live = await run([{ ...failing, error: "sk-{n} down" }]);
    expect(live.hits).not.toEqual(baseline.hits);
  });
});
