/** Every request, retries included, passes the client's one shared limiter. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { clientFor, readyProject } from "./support/client.js";
import { SkippingClock, flushPromises } from "./support/virtual-clock.js";

let t: TestSimulator;
let projectId: string;

beforeAll(async () => {
  t = await startTestSimulator();
  ({ projectId } = await readyProject(t));
});

afterAll(async () => {
  await t.close();
});

afterEach(async () => {
  await t.sim.clearFaults();
  await t.sim.resetStats();
});

describe("the shared limiter", () => {
  it("lets a burst of 5 through, then one request per refill, reporting each wait", async () => {
    // 6 requests per minute: one token every 10 s of (virtual) time after the burst.
    const clock = new SkippingClock();
    const c = clientFor(t, { clock, rateLimit: { requestsPerMinute: 6, burst: 5 } });
    try {
      await Promise.all(Array.from({ length: 8 }, () => c.api.listEndpoints(projectId)));
      expect(c.log.waits.map((w) => w.waitedMs)).toEqual([10_000, 20_000, 30_000]);
      expect(c.api.limiterStats()).toMatchObject({
        granted: 8,
        totalWaitedMs: 60_000,
        inFlight: 0,
        queued: 0,
        tokensRemaining: 0,
      });
      expect((await t.sim.stats()).total).toBe(8);
    } finally {
      await c.api.close();
    }
  });

  it("takes a token for every retry too", async () => {
    const clock = new SkippingClock();
    const c = clientFor(t, { clock, rateLimit: { requestsPerMinute: 60, burst: 1 } });
    try {
      await t.sim.addFault({ route: "listEndpoints", kind: "status", status: 503, count: 2 });
      await c.api.listEndpoints(projectId);
      expect(c.api.limiterStats().granted).toBe(3);
      expect(c.log.retries).toHaveLength(2);
      // Each retry's backoff (at most 5 ms here) is shorter than a token (1 s): both wait.
      expect(c.log.waits).toHaveLength(2);
      for (const [i, wait] of c.log.waits.entries()) {
        const backoff = c.log.retries[i]?.delayMs ?? 0;
        expect(wait.waitedMs + backoff).toBeGreaterThanOrEqual(1000);
      }
    } finally {
      await c.api.close();
    }
  });

  it("caps the requests in flight", async () => {
    const c = clientFor(t, { rateLimit: { maxConcurrency: 2 } });
    try {
      await t.sim.addFault({ route: "listEndpoints", kind: "latency", latency_ms: 100 });
      const calls = Array.from({ length: 6 }, () => c.api.listEndpoints(projectId));
      await flushPromises();
      expect(c.api.limiterStats()).toMatchObject({ inFlight: 2, queued: 4 });
      await Promise.all(calls);
      expect(c.api.limiterStats()).toMatchObject({ inFlight: 0, queued: 0, granted: 6 });
      expect(c.log.waits.length).toBe(4);
    } finally {
      await c.api.close();
    }
  });
});

describe("against the simulator's own rate limit", () => {
  let limited: TestSimulator;

  beforeAll(async () => {
    limited = await startTestSimulator({ rateLimit: { perMinute: 600, burstPerSecond: 3 } });
  });

  afterAll(async () => {
    await limited.close();
  });

  it("a client that overruns it gets 429s, pauses, and completes every call", async () => {
    const { projectId: id } = await readyProject(limited);
    // Far more eager than the server allows: the 429s must slow it down.
    const c = clientFor(limited, {
      rateLimit: { requestsPerMinute: 60_000, burst: 100, maxConcurrency: 8 },
      retry: { maxAttempts: 5, baseDelayMs: 1, maxDelayMs: 5 },
    });
    try {
      const results = await Promise.all(Array.from({ length: 6 }, () => c.api.listEndpoints(id)));
      expect(results).toHaveLength(6);
      const stats = (await limited.sim.stats()).routes.listEndpoints ?? {};
      expect(stats["200"]).toBe(6);
      expect(stats["429"]).toBeGreaterThan(0);
      expect(c.log.pauses.length).toBeGreaterThan(0);
      for (const pause of c.log.pauses) expect(pause.pauseMs).toBe(1000);
      expect(c.log.retries.every((r) => r.reason === "http_429")).toBe(true);
    } finally {
      await c.api.close();
    }
  });
});
