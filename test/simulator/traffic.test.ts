/** Generated traffic: mixed, realistic activity under the manual and the real clock. */
import { describe, expect, test } from "vitest";
import { isEndStatus, isOpenStatus, isUnknownStatus } from "../../src/contract/index.js";
import {
  zipfExponentFor,
  type TrafficOptions,
  type TruthOperation,
} from "../../src/simulator/index.js";
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

describe("skewed traffic", () => {
  /** Per project, the operations of two simulated hours of traffic (availability checks off). */
  async function operationsPerProject(skew: number): Promise<number[]> {
    const t = await startTestSimulator({
      seed: 11,
      availabilityCheckSeconds: 0,
      traffic: { projects: 100, operationsPerMinute: 60, skew },
    });
    try {
      const before = new Map(t.simulator.plane.world.projects.map((p) => [p.id, p.log.size]));
      for (let i = 0; i < 12; i++) await t.sim.advance(600);
      const ranked = await t.sim.trafficProjects();
      expect(ranked).toHaveLength(100);
      const counts = [];
      for (const id of ranked) {
        const after = (await t.sim.truth(id)).length;
        counts.push(after - (before.get(id) ?? 0));
      }
      return counts;
    } finally {
      await t.close();
    }
  }
  const topShare = (counts: readonly number[], top: number): number =>
    counts.slice(0, top).reduce((a, b) => a + b, 0) / counts.reduce((a, b) => a + b, 0);

  test("the most active 5% of the projects bring most of the operations", async () => {
    // 80% of the activities; fewer of the operations, as a connection to a compute that is
    // already active starts none, and the busiest computes are the ones most often active.
    const counts = await operationsPerProject(zipfExponentFor(100, 0.05, 0.8));
    expect(topShare(counts, 5)).toBeGreaterThan(0.55);
    expect(topShare(counts, 5)).toBeLessThan(0.85);
    // The cold half: a small share of them (half of them without skew).
    expect(topShare(counts.toReversed(), 50)).toBeLessThan(0.1);
  });

  test("without skew every project is alike", async () => {
    expect(topShare(await operationsPerProject(0), 5)).toBeLessThan(0.15);
  });

  test("the exponent for a shape depends on the fleet's size", () => {
    const small = zipfExponentFor(1000, 0.05, 0.8);
    const large = zipfExponentFor(10_000, 0.05, 0.8);
    expect(small).toBeGreaterThan(large);
    expect(large).toBeGreaterThan(0.9);
    expect(() => zipfExponentFor(100, 0, 0.8)).toThrow(RangeError);
  });
});

describe("a fleet with a history", () => {
  test("its logs hold the span's traffic and checks, its creation that long ago", async () => {
    const t = await startTestSimulator({
      seed: 3,
      availabilityCheckSeconds: 600,
      traffic: { projects: 10, operationsPerMinute: 30, historySeconds: 7200 },
    });
    try {
      const nowMs = Date.parse((await t.sim.clock()).now);
      const all: TruthOperation[] = [];
      for (const id of await t.sim.trafficProjects()) all.push(...(await t.sim.truth(id)));
      const ageOf = (o: TruthOperation) => (nowMs - Date.parse(o.created_at)) / 1000;
      const creations = all.filter((o) => o.action === "create_timeline");
      expect(creations.length).toBeGreaterThanOrEqual(10);
      expect(Math.max(...creations.map(ageOf))).toBe(7200);
      // Two hours at 30 a minute: some 3,600 activities, and a check every 10 minutes in each.
      const traffic = all.filter((o) => o.action !== "check_availability" && ageOf(o) < 7000);
      expect(traffic.length).toBeGreaterThan(2000);
      const checks = all.filter((o) => o.action === "check_availability");
      expect(checks.length).toBeGreaterThanOrEqual(10 * 11);
      // Nothing is dated after the start: the history ends where the clock begins.
      expect(Math.min(...all.map(ageOf))).toBeGreaterThanOrEqual(0);
    } finally {
      await t.close();
    }
  });

  test("a history longer than a simulated week is refused", async () => {
    await expect(
      startTestSimulator({ traffic: { projects: 1, historySeconds: 604_801 } }),
    ).rejects.toThrow("traffic.historySeconds must be within 0..604800");
  });
});

describe("a faster real clock", () => {
  test("speed 120 runs two simulated minutes a second, in the answers' Date too", async () => {
    const t = await startTestSimulator({ clock: "real", speed: 120 });
    try {
      const first = Date.parse((await t.api("GET", "/projects")).headers.get("date") ?? "");
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const later = Date.parse((await t.api("GET", "/projects")).headers.get("date") ?? "");
      expect((later - first) / 1000).toBeGreaterThan(110);
      expect((later - first) / 1000).toBeLessThan(200);
    } finally {
      await t.close();
    }
  });

  test("speed is refused on the manual clock", async () => {
    await expect(startTestSimulator({ clock: "manual", speed: 2 })).rejects.toThrow(
      "speed applies to the real clock only",
    );
  });
});
