/** Fault injection per route and method, by rate or count (deterministic under the seed). */
import { describe, expect, test } from "vitest";
import { errorBodySchema } from "../../src/contract/index.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { simulatorWithProject } from "../support/simulator-suite.js";

let t: TestSimulator;
let projectId: string;
let branchIds: string[];

simulatorWithProject((s) => ({ t, projectId, branchIds } = s), { each: true, branches: 2 });

const operationsPath = (): string => `/projects/${projectId}/operations?limit=5`;

/** A raw fetch, for answers the helper cannot read (cut bodies, dropped connections). */
function rawFetch(path: string): Promise<Response> {
  return fetch(t.apiUrl + path, { headers: { Authorization: `Bearer ${t.apiKey}` } });
}

describe("status faults", () => {
  test("a 5xx for the next N requests of a route, then normal answers", async () => {
    const fault = await t.sim.addFault({
      route: "listOperations",
      kind: "status",
      status: 502,
      count: 2,
    });
    expect(fault).toMatchObject({ id: "fault-1", kind: "status", status: 502, fired: 0 });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await t.api("GET", operationsPath())).status);
    expect(statuses).toEqual([502, 502, 200]);
    // Other routes are untouched.
    expect((await t.api("GET", `/projects/${projectId}/endpoints`)).status).toBe(200);
    const [listed] = await t.sim.listFaults();
    expect(listed).toMatchObject({ id: fault.id, fired: 2, count: 2 });
  });

  test("a fault with project_id hits that project's requests only", async () => {
    const other = (await t.sim.createProject({ plan: "paid" })).project.id;
    await t.sim.addFault({ project_id: projectId, kind: "status", status: 500 });
    expect((await t.api("GET", operationsPath())).status).toBe(500);
    expect((await t.api("GET", `/projects/${projectId}/endpoints`)).status).toBe(500);
    expect((await t.api("GET", `/projects/${other}/operations?limit=5`)).status).toBe(200);
    // A request that names no project (the projects list) is not hit.
    expect((await t.api("GET", "/projects")).status).toBe(200);
  });

  test("429 bursts carry Retry-After (1 s unless configured); 423 and the default 503", async () => {
    await t.sim.addFault({ route: "getEndpoint", kind: "status", status: 429, count: 1 });
    await t.sim.addFault({
      route: "listEndpoints",
      kind: "status",
      status: 429,
      retry_after_seconds: 7,
      count: 1,
    });
    await t.sim.addFault({ route: "startEndpoint", kind: "status", status: 423, count: 1 });
    await t.sim.addFault({ route: "listProjects", kind: "status", count: 1 });
    const get = await t.api("GET", `/projects/${projectId}/endpoints/ep-anything-000000`);
    expect([get.status, get.headers.get("retry-after")]).toEqual([429, "1"]);
    expect(errorBodySchema.parse(get.body).code).toBe("rate_limited");
    const list = await t.api("GET", `/projects/${projectId}/endpoints`);
    expect([list.status, list.headers.get("retry-after")]).toEqual([429, "7"]);
    const start = await t.api("POST", `/projects/${projectId}/endpoints/ep-anything-000000/start`);
    expect(start.status).toBe(423);
    const projects = await t.api("GET", "/projects", { headers: { "X-Request-ID": "rid-1" } });
    expect(projects.status).toBe(503);
    expect(errorBodySchema.parse(projects.body).request_id).toBe("rid-1");
  });

  test("a faulted request is not applied", async () => {
    await t.sim.addFault({ route: "createEndpoint", kind: "status", status: 500, count: 1 });
    const body = { endpoint: { branch_id: branchIds[1], type: "read_write" } };
    expect((await t.api("POST", `/projects/${projectId}/endpoints`, { body })).status).toBe(500);
    expect((await t.api("POST", `/projects/${projectId}/endpoints`, { body })).status).toBe(201);
  });

  test("a method filter applies the fault to that method only", async () => {
    await t.sim.addFault({ method: "post", kind: "status", status: 503 });
    expect((await t.api("GET", `/projects/${projectId}/endpoints`)).status).toBe(200);
    const body = { endpoint: { branch_id: branchIds[1], type: "read_write" } };
    expect((await t.api("POST", `/projects/${projectId}/endpoints`, { body })).status).toBe(503);
    // The control interface is never faulted.
    expect((await t.request("GET", "/_sim/clock")).status).toBe(200);
  });

  test("a rate hits a seeded share of requests, the same ones under the same seed", async () => {
    async function pattern(): Promise<number[]> {
      const local = await startTestSimulator({ seed: 99 });
      try {
        const created = await local.sim.createProject();
        await local.sim.addFault({
          route: "listOperations",
          kind: "status",
          status: 503,
          rate: 0.5,
        });
        const statuses: number[] = [];
        for (let i = 0; i < 40; i++) {
          statuses.push(
            (await local.api("GET", `/projects/${created.project.id}/operations`)).status,
          );
        }
        return statuses;
      } finally {
        await local.close();
      }
    }
    const first = await pattern();
    expect(await pattern()).toEqual(first);
    const hits = first.filter((s) => s === 503).length;
    expect(hits).toBeGreaterThan(5);
    expect(hits).toBeLessThan(35);
  });

  test("clearing removes every fault", async () => {
    await t.sim.addFault({ kind: "status", status: 500 });
    await t.sim.addFault({ kind: "drop" });
    expect(await t.sim.clearFaults()).toBe(2);
    expect(await t.sim.listFaults()).toEqual([]);
    expect((await t.api("GET", "/projects")).status).toBe(200);
  });

  test("invalid fault specs answer 400", async () => {
    for (const body of [
      { kind: "explode" },
      { kind: "latency" },
      { kind: "drop", status: 500 },
      { kind: "status", status: 200 },
      { kind: "status", route: "listEverything" },
      { kind: "status", rate: 1.5 },
      { kind: "status", count: 0 },
    ]) {
      expect((await t.request("POST", "/_sim/faults", { body })).status, JSON.stringify(body)).toBe(
        400,
      );
    }
  });
});

describe("delivery faults", () => {
  test("latency delays the answer", async () => {
    await t.sim.addFault({ route: "listProjects", kind: "latency", latency_ms: 300, count: 1 });
    const started = performance.now();
    expect((await t.api("GET", "/projects")).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  });

  test("malformed JSON: a 200 whose body does not parse; the request was applied", async () => {
    await t.sim.addFault({ route: "createEndpoint", kind: "malformed", count: 1 });
    const result = await t.api("POST", `/projects/${projectId}/endpoints`, {
      body: { endpoint: { branch_id: branchIds[1], type: "read_only" } },
    });
    expect(result.status).toBe(201);
    expect(result.headers.get("content-type")).toBe("application/json");
    expect(() => JSON.parse(result.text) as unknown).toThrow();
    const endpoints = await t.api<{ endpoints: unknown[] }>(
      "GET",
      `/projects/${projectId}/endpoints`,
    );
    expect(endpoints.body.endpoints).toHaveLength(2);
  });

  test("truncated: the Content-Length promises more than arrives, then the connection ends", async () => {
    await t.sim.addFault({ route: "listOperations", kind: "truncated", count: 1 });
    const response = await rawFetch(operationsPath());
    expect(response.status).toBe(200);
    const promised = Number(response.headers.get("content-length"));
    expect(promised).toBeGreaterThan(0);
    await expect(response.text()).rejects.toThrow();
    expect((await t.api("GET", operationsPath())).status).toBe(200);
  });

  test("drop: the connection is closed without an answer", async () => {
    await t.sim.addFault({ route: "getOperation", kind: "drop", count: 1 });
    await expect(rawFetch(`/projects/${projectId}/operations/x`)).rejects.toThrow();
    const stats = await t.sim.stats();
    expect(stats.routes.getOperation).toEqual({ dropped: 1 });
  });
});

describe("stats", () => {
  test("requests counted per route and status, resettable", async () => {
    await t.api("GET", "/projects");
    await t.api("GET", "/projects");
    await t.api("GET", `/projects/${projectId}/operations?limit=0`);
    await t.api("GET", "/nowhere");
    await t.api("GET", "/projects", { apiKey: "bad" });
    expect(await t.sim.stats()).toEqual({
      total: 5,
      routes: {
        listProjects: { "200": 2, "401": 1 },
        listOperations: { "400": 1 },
        unknown: { "404": 1 },
      },
      longestUnreadSeconds: 0,
      unreadSecondsByProject: {},
      projectsRead: 0,
    });
    await t.sim.resetStats();
    expect(await t.sim.stats()).toEqual({
      total: 0,
      routes: {},
      longestUnreadSeconds: 0,
      unreadSecondsByProject: {},
      projectsRead: 0,
    });
  });

  test("the longest any project went without its operations read, since the reset", async () => {
    const read = () => t.api("GET", `/projects/${projectId}/operations`);
    await read();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await t.sim.resetStats();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await read();
    await read();
    const stats = await t.sim.stats();
    expect(stats.projectsRead).toBe(1);
    // From the reset to the first read; the 300 ms before the reset do not count.
    expect(stats.longestUnreadSeconds).toBeGreaterThanOrEqual(0.2);
    expect(stats.longestUnreadSeconds).toBeLessThan(0.45);
    expect(stats.unreadSecondsByProject).toEqual({ [projectId]: stats.longestUnreadSeconds });
    await new Promise((resolve) => setTimeout(resolve, 500));
    // The time since the last read counts too.
    expect((await t.sim.stats()).longestUnreadSeconds).toBeGreaterThanOrEqual(0.5);
  });
});
