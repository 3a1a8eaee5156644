/** Generated traffic: mixed, realistic activity under the manual and the real clock. */
import { describe, expect, test } from "vitest";
import { isEndStatus, isOpenStatus, isUnknownStatus } from "../../src/contract/index.js";
import type { TrafficOptions, TruthOperation } from "../../src/simulator/index.js";
import { startTestSimulator } from "../support/simulator.js";

const BUSY: TrafficOptions = {
  projects: 8,
  operationsPerMinute: 60,
  failureShare: 0.2,
  retryShare: 0.5,
  slowShare: 0.1,
  cancellationShare: 0.05,
};

/** Runs two simulated hours of traffic; returns every project's ground truth. */
async function twoHours(seed: number): Promise<TruthOperation[]> {
  const t = await startTestSimulator({ seed, traffic: BUSY });
  try {
    for (let i = 0; i < 12; i++) await t.sim.advance(600);
    const projects = await t.api<{ projects: { id: string }[] }>("GET", "/projects?limit=100");
    expect(projects.body.projects).toHaveLength(8);
    const all: TruthOperation[] = [];
    for (const p of projects.body.projects) all.push(...(await t.sim.truth(p.id)));
    return all;
  } finally {
    await t.close();
  }
}

describe("traffic under the manual clock", () => {
  test("mixed activity with failures, retries, errors, cancellations and slow operations", async () => {
    const all = await twoHours(5);
    expect(all.length).toBeGreaterThan(300);
    const actions = new Set(all.map((o) => o.action));
    for (const action of [
      "create_timeline",
      "create_branch",
      "start_compute",
      "suspend_compute",
      "apply_config",
      "apply_storage_config",
      "check_availability",
    ]) {
      expect(actions, action).toContain(action);
    }
    const statuses = new Set(all.map((o) => o.status));
    for (const status of ["finished", "failed", "error", "cancelled", "skipped"]) {
      expect(statuses, status).toContain(status);
    }
    const retriedThenFinished = all.filter(
      (o) => o.status === "finished" && o.failures_count === 1 && o.retry_at !== undefined,
    );
    expect(retriedThenFinished.length).toBeGreaterThan(0);
    const slow = all.filter(
      (o) => o.action === "apply_config" && (o.total_duration_ms ?? 0) > 20_000,
    );
    expect(slow.length).toBeGreaterThan(0);
    expect(all.some((o) => o.history.some((h) => h.status === "cancellation_pending"))).toBe(true);
  });

  test("every record is consistent with its own history", async () => {
    for (const op of await twoHours(6)) {
      const last = op.history.at(-1);
      expect(last?.status).toBe(op.status);
      expect(last?.failures_count).toBe(op.failures_count);
      const failures = op.history.filter((h) => h.status === "failed" || h.status === "error");
      expect(op.failures_count).toBe(failures.length);
      const times = op.history.map((h) => Date.parse(h.at));
      expect(times).toEqual([...times].sort((a, b) => a - b));
      expect(isUnknownStatus(op.status)).toBe(false);
      if (op.status === "error" || op.status === "failed") expect(op.error).toBeDefined();
      expect(isEndStatus(op.status) || isOpenStatus(op.status)).toBe(true);
    }
  });

  test("the same seed generates the same traffic", async () => {
    expect(await twoHours(7)).toEqual(await twoHours(7));
  });
});

describe("traffic under the real clock", () => {
  test("generates as wall time passes", async () => {
    const t = await startTestSimulator({
      clock: "real",
      traffic: { projects: 3, operationsPerMinute: 6000 },
    });
    try {
      const initial = t.simulator.plane.world.projects.reduce((n, p) => n + p.log.size, 0);
      await new Promise((resolve) => setTimeout(resolve, 600));
      t.simulator.settle();
      const later = t.simulator.plane.world.projects.reduce((n, p) => n + p.log.size, 0);
      expect(later).toBeGreaterThan(initial);
    } finally {
      await t.close();
    }
  });
});
