/**
 * Retries against injected faults: what is repeated, what is not, and how long the client
 * waits (read from the client's events and the simulator's request stats, not the wall clock).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ApiError } from "../../src/api/index.js";
import type { SimFaultRequest } from "../../src/simulator/index.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import {
  apiErrorOf,
  clientFor,
  expectNoSecret,
  readyProject,
  type TestClient,
} from "./support/client.js";

let t: TestSimulator;
let c: TestClient;
let projectId: string;
let branchIds: string[];
const thrown: unknown[] = [];

beforeAll(async () => {
  t = await startTestSimulator();
  c = clientFor(t);
  ({ projectId, branchIds } = await readyProject(t, "paid", 4));
});

afterAll(async () => {
  await c.api.close();
  await t.close();
  // Every error any test here provoked: none may show the key.
  for (const error of thrown) expectNoSecret(error, t.apiKey);
});

afterEach(async () => {
  await t.sim.clearFaults();
  // Lets every operation a test started end, so that none holds an endpoint (423) later.
  await t.sim.advance(60);
  await t.sim.resetStats();
});

async function fault(spec: SimFaultRequest): Promise<void> {
  await t.sim.addFault(spec);
}

async function failure(work: Promise<unknown>): Promise<ApiError> {
  const error = await apiErrorOf(work);
  thrown.push(error);
  return error;
}

async function routeStats(route: string): Promise<Record<string, number>> {
  return (await t.sim.stats()).routes[route] ?? {};
}

function retriesOf(route: string, from: number) {
  return c.log.retries.slice(from).filter((e) => e.route === route);
}

describe("GET is retried after any failure that says nothing was done wrong by the caller", () => {
  it.each([
    [{ kind: "status", status: 500 }, "http_500", "500"],
    [{ kind: "status", status: 503 }, "http_503", "503"],
    [{ kind: "status", status: 423 }, "http_423", "423"],
    [{ kind: "drop" }, "network", "dropped"],
    [{ kind: "truncated" }, "network", "200"],
    [{ kind: "malformed" }, "invalid_response", "200"],
  ] as const)("%j", async (spec, reason, recorded) => {
    await fault({ route: "listEndpoints", count: 2, ...spec });
    const from = c.log.retries.length;
    const endpoints = await c.api.listEndpoints(projectId);
    expect(endpoints.length).toBeGreaterThan(0);
    expect(retriesOf("listEndpoints", from).map((e) => [e.attempt, e.reason])).toEqual([
      [1, reason],
      [2, reason],
    ]);
    expect((await routeStats("listEndpoints"))[recorded]).toBe(recorded === "200" ? 3 : 2);
  });

  it("gives up after maxAttempts with a retryable error", async () => {
    await fault({ route: "getOperation", kind: "status", status: 502 });
    const [op] = (await c.api.listOperations(projectId, { limit: 1 })).operations;
    const error = await failure(c.api.getOperation(projectId, op?.id ?? ""));
    expect(error).toMatchObject({
      kind: "http",
      status: 502,
      code: "injected_fault",
      route: "getOperation",
      retryable: true,
      attempts: 3,
    });
    expect(await routeStats("getOperation")).toEqual({ "502": 3 });
  });

  it("names the route, status, request id and problem of a malformed body", async () => {
    await fault({ route: "listOperations", kind: "malformed" });
    const error = await failure(c.api.listOperations(projectId, { limit: 5 }));
    expect(error).toMatchObject({
      kind: "invalid_response",
      status: 200,
      code: "invalid_json",
      retryable: true,
      attempts: 3,
    });
    expect(error.message).toMatch(
      /^listOperations: invalid response to HTTP 200 \[invalid_json\]: body is not JSON: /,
    );
    expect(error.message).toContain(`request id ${error.requestId}`);
  });

  it("times out a slow answer and retries it", async () => {
    const slow = clientFor(t, { timeouts: { headersMs: 100 } });
    try {
      // undici checks these timeouts on a tick of about half a second: stay well beyond it.
      await fault({ route: "listEndpoints", kind: "latency", latency_ms: 1500, count: 1 });
      await slow.api.listEndpoints(projectId);
      expect(slow.log.transportErrors.map((e) => [e.kind, e.code, e.attempt])).toEqual([
        ["timeout", "UND_ERR_HEADERS_TIMEOUT", 1],
      ]);
      expect(slow.log.retries.map((e) => e.reason)).toEqual(["timeout"]);
    } finally {
      await slow.api.close();
    }
  });
});

describe("writes are repeated only when the server did not process them", () => {
  it.each([503, 423, 429])("POST answered %i is retried", async (status) => {
    await fault({
      route: "createEndpoint",
      kind: "status",
      status,
      retry_after_seconds: 0,
      count: 1,
    });
    const created = await c.api.createEndpoint(projectId, {
      branch_id: branchIds[0] ?? "",
      type: "read_only",
    });
    expect(created.endpoint.type).toBe("read_only");
    expect(await routeStats("createEndpoint")).toEqual({ [String(status)]: 1, "201": 1 });
  });

  it("POST answered 500 is not retried", async () => {
    await fault({ route: "createEndpoint", kind: "status", status: 500, count: 1 });
    const error = await failure(
      c.api.createEndpoint(projectId, { branch_id: branchIds[0] ?? "", type: "read_only" }),
    );
    expect(error).toMatchObject({ status: 500, retryable: false, attempts: 1 });
    expect(await routeStats("createEndpoint")).toEqual({ "500": 1 });
  });

  it("POST whose connection dropped is not retried", async () => {
    await fault({ route: "createEndpoint", kind: "drop", count: 1 });
    const error = await failure(
      c.api.createEndpoint(projectId, { branch_id: branchIds[1] ?? "", type: "read_write" }),
    );
    expect(error).toMatchObject({
      kind: "network",
      status: undefined,
      route: "createEndpoint",
      method: "POST",
      retryable: false,
      attempts: 1,
    });
    expect(error.code).not.toBe("");
    expect(await routeStats("createEndpoint")).toEqual({ dropped: 1 });
  });

  it("PATCH and DELETE whose answer was cut short are not retried", async () => {
    const [endpoint] = await c.api.listEndpoints(projectId);
    await fault({ route: "updateEndpoint", kind: "truncated", count: 1 });
    const patch = await failure(
      c.api.updateEndpoint(projectId, endpoint?.id ?? "", { suspend_timeout_seconds: 900 }),
    );
    expect(patch).toMatchObject({ method: "PATCH", retryable: false, attempts: 1 });
    await fault({ route: "deleteEndpoint", kind: "malformed", count: 1 });
    const created = await c.api.createEndpoint(projectId, {
      branch_id: branchIds[2] ?? "",
      type: "read_only",
    });
    await t.sim.advance(10);
    const del = await failure(c.api.deleteEndpoint(projectId, created.endpoint.id));
    expect(del).toMatchObject({
      kind: "invalid_response",
      method: "DELETE",
      status: 200,
      retryable: false,
      attempts: 1,
    });
    expect(await routeStats("deleteEndpoint")).toEqual({ "200": 1 });
  });

  it("a POST that timed out is not retried", async () => {
    const slow = clientFor(t, { timeouts: { headersMs: 100 } });
    try {
      await fault({ route: "restartEndpoint", kind: "latency", latency_ms: 1500, count: 1 });
      const [endpoint] = await slow.api.listEndpoints(projectId);
      const error = await failure(slow.api.restartEndpoint(projectId, endpoint?.id ?? ""));
      expect(error).toMatchObject({ kind: "timeout", retryable: false, attempts: 1 });
    } finally {
      await slow.api.close();
    }
  });
});

describe("Retry-After", () => {
  it("delays the retry and pauses the shared limiter for every caller", async () => {
    await fault({
      route: "listEndpoints",
      kind: "status",
      status: 429,
      retry_after_seconds: 1,
      count: 1,
    });
    const from = {
      retries: c.log.retries.length,
      pauses: c.log.pauses.length,
      waits: c.log.waits.length,
    };
    const first = c.api.listEndpoints(projectId);
    // Another caller arriving once the 429 is known has to wait for the pause too.
    while (c.log.pauses.length === from.pauses) await new Promise((r) => setTimeout(r, 2));
    const second = c.api.listOperations(projectId, { limit: 1 });
    await Promise.all([first, second]);
    expect(c.log.retries.slice(from.retries)).toEqual([
      expect.objectContaining({ reason: "http_429", delayMs: 1000, delaySource: "retry-after" }),
    ]);
    expect(c.log.pauses.slice(from.pauses)).toEqual([{ route: "listEndpoints", pauseMs: 1000 }]);
    const waits = c.log.waits.slice(from.waits);
    const secondWait = waits.find((w) => w.route === "listOperations");
    expect(secondWait?.waitedMs).toBeGreaterThanOrEqual(900);
    expect(await routeStats("listEndpoints")).toEqual({ "429": 1, "200": 1 });
  });
});

describe("abort", () => {
  it("stops a call waiting to retry, with the signal's reason", async () => {
    const patient = clientFor(t, { retry: { maxAttempts: 5, baseDelayMs: 60_000 } });
    try {
      await fault({ route: "listEndpoints", kind: "status", status: 503 });
      const controller = new AbortController();
      const call = patient.api.listEndpoints(projectId, { signal: controller.signal });
      while (patient.log.retries.length === 0) await new Promise((r) => setTimeout(r, 2));
      controller.abort(new Error("shutting down"));
      await expect(call).rejects.toThrow("shutting down");
      expect(await routeStats("listEndpoints")).toEqual({ "503": 1 });
    } finally {
      await patient.api.close();
    }
  });
});
