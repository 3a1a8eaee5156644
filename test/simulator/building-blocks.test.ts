/** Unit tests of the simulator's pure building blocks. */
import { describe, expect, test } from "vitest";
import { EventQueue } from "../../src/simulator/event-queue.js";
import { RateLimiter, TokenBucket } from "../../src/simulator/http/rate-limiter.js";
import { Router } from "../../src/simulator/http/router.js";
import { formatUuid, IdFactory, uuidFirstWord } from "../../src/simulator/ids.js";
import {
  resolveCreate,
  resolveUpdate,
  sizeChanged,
} from "../../src/simulator/model/compute-rules.js";
import { Interner } from "../../src/simulator/model/interner.js";
import { OperationLog } from "../../src/simulator/model/operation-log.js";
import { failuresAfter, holdsEndpoint, isRetry } from "../../src/simulator/model/status-rules.js";
import { SeededRandom } from "../../src/simulator/random.js";
import { Scheduler } from "../../src/simulator/scheduler.js";
import { parseIsoMicros, toIsoMicros, toIsoSeconds } from "../../src/simulator/time.js";
import { trafficPlan } from "../../src/simulator/traffic/outcomes.js";

const T0 = Date.parse("2025-01-01T00:00:00Z") * 1000;

describe("time formats", () => {
  test("whole seconds and microseconds", () => {
    expect(toIsoSeconds(T0 + 1_999_999)).toBe("2025-01-01T00:00:01Z");
    expect(toIsoMicros(T0 + 1_000_042)).toBe("2025-01-01T00:00:01.000042Z");
  });

  test("a cursor parses back to the same microsecond", () => {
    for (const us of [T0, T0 + 1, T0 + 999_999, T0 + 86_400_123_456]) {
      expect(parseIsoMicros(toIsoMicros(us))).toBe(us);
    }
    expect(parseIsoMicros("2025-01-01T00:00:01.5Z")).toBe(T0 + 1_500_000);
  });

  test("anything else is not a cursor", () => {
    for (const bad of ["", "yesterday", "2025-02-30T00:00:00Z", "2025-01-01T00:00:00.1234567Z"]) {
      expect(parseIsoMicros(bad)).toBeUndefined();
    }
  });
});

describe("event queue and scheduler", () => {
  test("pops by time, then in insertion order", () => {
    const queue = new EventQueue();
    const fired: string[] = [];
    const times = [5, 1, 3, 1, 9, 3, 0];
    times.forEach((t, i) => {
      queue.push(t, () => fired.push(`${t}:${i}`));
    });
    for (let e = queue.pop(); e !== undefined; e = queue.pop()) e.run();
    expect(fired).toEqual(["0:6", "1:1", "1:3", "3:2", "3:5", "5:0", "9:4"]);
  });

  test("events run at their own time, including ones scheduled while running", () => {
    const scheduler = new Scheduler(0);
    const seen: number[] = [];
    scheduler.at(10, () => {
      seen.push(scheduler.nowUs);
      scheduler.after(5, () => seen.push(scheduler.nowUs));
    });
    scheduler.at(30, () => seen.push(scheduler.nowUs));
    scheduler.runUntil(20);
    expect(seen).toEqual([10, 15]);
    expect(scheduler.nowUs).toBe(20);
    scheduler.runUntil(30);
    expect(seen).toEqual([10, 15, 30]);
  });
});

describe("seeded ids", () => {
  test("the same seed gives the same ids; UUIDs are version 4", () => {
    const a = new IdFactory(new SeededRandom(7));
    const b = new IdFactory(new SeededRandom(7));
    const idsA = [a.projectId(), a.branchId(), a.endpointId(), a.uuid()];
    expect([b.projectId(), b.branchId(), b.endpointId(), b.uuid()]).toEqual(idsA);
    expect(idsA[0]).toMatch(/^[a-z]+-[a-z]+-\d{6}$/);
    expect(idsA[1]).toMatch(/^br-[a-z]+-[a-z]+-\d{6}$/);
    expect(idsA[2]).toMatch(/^ep-[a-z]+-[a-z]+-\d{6}$/);
    expect(idsA[3]).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(new IdFactory(new SeededRandom(8)).projectId()).not.toBe(idsA[0]);
  });

  test("uuid words round-trip through the index key", () => {
    const id = formatUuid(0xdeadbeef, 0x12344567, 0x89abcdef, 0x01234567);
    expect(id).toBe("deadbeef-1234-4567-89ab-cdef01234567");
    expect(uuidFirstWord(id)).toBe(0xdeadbeef);
    expect(uuidFirstWord("not-a-uuid")).toBeUndefined();
  });
});

describe("status rules", () => {
  test("failures count every arrival at failed or error; failed → running is a retry", () => {
    expect(failuresAfter(0, "failed")).toBe(1);
    expect(failuresAfter(1, "error")).toBe(2);
    expect(failuresAfter(1, "running")).toBe(1);
    expect(isRetry("failed", "running")).toBe(true);
    expect(isRetry("scheduling", "running")).toBe(false);
  });

  test("open operations hold their endpoint, availability checks never do", () => {
    expect(holdsEndpoint("apply_config", "running")).toBe(true);
    expect(holdsEndpoint("apply_config", "scheduling")).toBe(true);
    expect(holdsEndpoint("apply_config", "cancellation_pending")).toBe(true);
    expect(holdsEndpoint("apply_config", "failed")).toBe(false);
    expect(holdsEndpoint("check_availability", "running")).toBe(false);
  });
});

describe("operation log", () => {
  const newLog = (): OperationLog => new OperationLog(new Interner(), new Interner());
  const ids = new IdFactory(new SeededRandom(1));
  /** Appends a running operation "a" on branch 0, with no endpoint; its index. */
  const appendRunning = (
    log: OperationLog,
    atUs: number,
    more: { createdOffsetUs?: number } = {},
  ): number =>
    log.append({
      id: ids.uuidWords(),
      branch: 0,
      endpoint: -1,
      action: "a",
      status: "running",
      atUs,
      ...more,
    });

  test("ties are bumped by a microsecond and pages never skip or repeat", () => {
    const log = newLog();
    for (let i = 0; i < 250; i++) {
      appendRunning(log, T0);
    }
    expect(log.createdAt(249)).toBe(T0 + 249);
    const seen: number[] = [];
    let cursor: number | undefined;
    for (;;) {
      const page = log.newestFirst(cursor, 7);
      seen.push(...page);
      const last = page.at(-1);
      if (last === undefined) break;
      cursor = log.createdAt(last);
    }
    expect(seen).toEqual(Array.from({ length: 250 }, (_, i) => 249 - i));
  });

  test("an overlapping page starts at the record its cursor came from", () => {
    const log = newLog();
    for (let i = 0; i < 6; i++) {
      appendRunning(log, T0 + i * 10);
    }
    expect(log.newestFirstOverlapping(log.createdAt(3), 3)).toEqual([3, 2, 1]);
    // Between two records: the nearest newer one; above everything: the normal page.
    expect(log.newestFirstOverlapping(log.createdAt(3) - 5, 2)).toEqual([3, 2]);
    expect(log.newestFirstOverlapping(T0 + 1000, 2)).toEqual([5, 4]);
  });

  test("a misdated record shows another creation time, kept within years 0001..9999", () => {
    const log = newLog();
    const append = (createdOffsetUs: number): number => appendRunning(log, T0, { createdOffsetUs });
    const ahead = append(3_600_000_000);
    const far = append(1e18);
    const before = append(-1e18);
    expect(log.shownCreatedAt(ahead) - log.createdAt(ahead)).toBe(3_600_000_000);
    expect(new Date(log.shownCreatedAt(far) / 1000).toISOString()).toBe("9999-12-31T23:59:59.000Z");
    expect(new Date(log.shownCreatedAt(before) / 1000).toISOString()).toBe(
      "0001-01-01T00:00:00.000Z",
    );
    // Order stays real.
    expect(log.newestFirst(undefined, 3)).toEqual([before, far, ahead]);
  });

  test("history, failures, retry and error follow the transitions", () => {
    const log = newLog();
    const i = log.append({
      id: ids.uuidWords(),
      branch: 0,
      endpoint: 2,
      action: "x",
      status: "running",
      atUs: T0,
    });
    log.transition(i, "failed", T0 + 10, "boom");
    expect([log.failuresCount(i), log.error(i)]).toEqual([1, "boom"]);
    log.transition(i, "running", T0 + 20);
    expect([log.retryAt(i), log.error(i)]).toEqual([T0 + 20, undefined]);
    log.transition(i, "error", T0 + 30);
    expect(log.failuresCount(i)).toBe(2);
    expect(log.histories()[i]?.map((h) => [h.status, h.atUs - T0, h.failuresCount])).toEqual([
      ["running", 0, 0],
      ["failed", 10, 1],
      ["running", 20, 1],
      ["error", 30, 2],
    ]);
    expect(log.indexOf(log.id(i))).toBe(i);
    expect(log.endpoint(i)).toBe(2);
  });

  test("lookup by id after growth, including records added after the index was built", () => {
    const log = newLog();
    const first = appendRunning(log, T0);
    expect(log.indexOf(log.id(first))).toBe(first);
    for (let i = 0; i < 100; i++) {
      appendRunning(log, T0 + i);
    }
    expect(log.indexOf(log.id(77))).toBe(77);
    expect(log.indexOf("00000000-0000-4000-8000-000000000000")).toBeUndefined();
  });
});

describe("compute rules", () => {
  const current = { minCu: 0.25, maxCu: 0.25, suspendTimeoutSeconds: 0 };

  test("defaults and sizes from the table", () => {
    expect(resolveCreate("paid", {})).toEqual({ ok: true, config: current });
    expect(resolveCreate("paid", { minCu: 2 })).toMatchObject({ config: { minCu: 2, maxCu: 2 } });
    expect(resolveCreate("paid", { maxCu: 4 })).toMatchObject({
      config: { minCu: 0.25, maxCu: 4 },
    });
    expect(resolveCreate("paid", { minCu: 0.3 })).toMatchObject({ ok: false, status: 400 });
    expect(resolveCreate("paid", { minCu: 9 })).toMatchObject({ ok: false, status: 400 });
    expect(resolveCreate("paid", { minCu: 4, maxCu: 2 })).toMatchObject({ ok: false, status: 400 });
  });

  test("the free plan is fixed at 0.25 CU and keeps the default auto-suspend", () => {
    expect(resolveCreate("free", { maxCu: 1 })).toMatchObject({ ok: false, status: 422 });
    expect(resolveCreate("free", { suspendTimeoutSeconds: 300 })).toMatchObject({ ok: true });
    expect(resolveCreate("free", { suspendTimeoutSeconds: -1 })).toMatchObject({ status: 422 });
    expect(resolveUpdate("free", current, { suspendTimeoutSeconds: 60 })).toMatchObject({
      status: 422,
    });
  });

  test("updates keep unspecified fields", () => {
    const outcome = resolveUpdate("paid", { ...current, maxCu: 2 }, { minCu: 1 });
    expect(outcome).toEqual({ ok: true, config: { minCu: 1, maxCu: 2, suspendTimeoutSeconds: 0 } });
    expect(resolveUpdate("paid", current, { minCu: 1 })).toMatchObject({ status: 400 });
    expect(sizeChanged(current, { ...current, maxCu: 1 })).toBe(true);
    expect(sizeChanged(current, { ...current, suspendTimeoutSeconds: 5 })).toBe(false);
  });
});

describe("rate limiter", () => {
  test("a bucket refills continuously", () => {
    const bucket = new TokenBucket(2, 1, 0);
    bucket.take(0);
    bucket.take(0);
    expect(bucket.waitSeconds(0)).toBe(1);
    expect(bucket.waitSeconds(500)).toBeCloseTo(0.5);
    expect(bucket.waitSeconds(1000)).toBe(0);
  });

  test("per-route bursts and the account's minute are both enforced", () => {
    let now = 0;
    const limiter = new RateLimiter({ perMinute: 5, burstPerSecond: 2 }, () => now);
    expect(limiter.check("a")).toEqual({ allowed: true });
    expect(limiter.check("a")).toEqual({ allowed: true });
    expect(limiter.check("a")).toEqual({ allowed: false, retryAfterSeconds: 1 });
    expect(limiter.check("b").allowed).toBe(true);
    expect(limiter.check("b").allowed).toBe(true);
    expect(limiter.check("c").allowed).toBe(true);
    // The minute's 5 tokens are spent: one refills every 12 s.
    expect(limiter.check("c")).toEqual({ allowed: false, retryAfterSeconds: 12 });
    now = 12_000;
    expect(limiter.check("c").allowed).toBe(true);
  });
});

describe("router", () => {
  const router = new Router<string>()
    .add("GET", "/projects/:id/operations", "list", "L")
    .add("POST", "/projects/:id/operations", "create", "C");

  test("captures parameters, tells wrong methods from unknown paths", () => {
    expect(router.match("GET", "/projects/p-1/operations")).toMatchObject({
      kind: "found",
      name: "list",
      params: { id: "p-1" },
    });
    expect(router.match("PUT", "/projects/p-1/operations")).toMatchObject({
      kind: "method-not-allowed",
      allow: ["GET", "POST"],
    });
    expect(router.match("GET", "/projects/p-1")).toEqual({ kind: "not-found" });
    expect(router.match("GET", "/projects/%E0%A4%A/operations")).toEqual({ kind: "not-found" });
  });
});

describe("traffic outcomes", () => {
  const shares = { failureShare: 0.3, retryShare: 0.5, slowShare: 0.1, cancellationShare: 0.1 };

  test("plans are well formed and cover every path", () => {
    const random = new SeededRandom(3);
    const endings = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const plan = trafficPlan("start_compute", random, shares);
      expect(plan[0]).toEqual({ status: "running", offsetUs: 0 });
      for (let s = 1; s < plan.length; s++) {
        expect(plan[s]?.offsetUs).toBeGreaterThanOrEqual(plan[s - 1]?.offsetUs ?? 0);
      }
      endings.add(plan.map((s) => s.status).join(">"));
    }
    expect([...endings].sort()).toEqual([
      "running>cancellation_pending>cancelled",
      "running>failed",
      "running>failed>running>error",
      "running>failed>running>finished",
      "running>finished",
    ]);
  });
});
