/** The API's rate limit: 429 with Retry-After (real API: 700/min, 40/s per route). */
import { afterEach, describe, expect, test } from "vitest";
import { errorBodySchema } from "../../src/contract/index.js";
import { REAL_API_RATE_LIMIT } from "../../src/simulator/index.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";

let t: TestSimulator;

afterEach(async () => {
  await t.close();
});

async function burst(count: number, path = "/projects"): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push((await t.api("GET", path)).status);
  return statuses;
}

describe("rate limit", () => {
  test("the real API's default: a route's burst beyond 40 per second answers 429", async () => {
    t = await startTestSimulator({ rateLimit: REAL_API_RATE_LIMIT });
    // Sent at once, so that the bucket cannot refill noticeably meanwhile.
    const results = await Promise.all(Array.from({ length: 80 }, () => t.api("GET", "/projects")));
    const accepted = results.filter((r) => r.status === 200).length;
    expect(accepted).toBeGreaterThanOrEqual(40);
    expect(accepted).toBeLessThan(80);
    const refused = results.find((r) => r.status === 429);
    expect(Number(refused?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(errorBodySchema.parse(refused?.body).code).toBe("rate_limited");
    const stats = await t.sim.stats();
    expect(stats.routes.listProjects?.["429"]).toBe(80 - accepted);
  });

  test("the account's per-minute allowance is shared by all routes", async () => {
    t = await startTestSimulator({ rateLimit: { perMinute: 5, burstPerSecond: 100 } });
    const created = await t.sim.createProject();
    expect(await burst(3)).toEqual([200, 200, 200]);
    expect(await burst(2, `/projects/${created.project.id}/operations`)).toEqual([200, 200]);
    const refused = await t.api("GET", `/projects/${created.project.id}/endpoints`);
    expect(refused.status).toBe(429);
    // One token comes back every 12 s.
    expect(refused.headers.get("retry-after")).toBe("12");
  });

  test("each route has its own burst", async () => {
    t = await startTestSimulator({ rateLimit: { perMinute: 1000, burstPerSecond: 3 } });
    const created = await t.sim.createProject();
    expect((await burst(4)).at(-1)).toBe(429);
    expect(await burst(3, `/projects/${created.project.id}/endpoints`)).toEqual([200, 200, 200]);
  });

  test("/_sim calls are never limited; rateLimit false switches the limit off", async () => {
    t = await startTestSimulator({ rateLimit: { perMinute: 2, burstPerSecond: 2 } });
    for (let i = 0; i < 20; i++) expect((await t.request("GET", "/_sim/clock")).status).toBe(200);
    await t.close();
    t = await startTestSimulator({ rateLimit: false });
    expect((await burst(100)).every((s) => s === 200)).toBe(true);
  });
});
