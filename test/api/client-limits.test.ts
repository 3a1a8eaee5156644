/**
 * Every request is bounded in time and size (invariant 7, docs/design.md): an answer that drips a
 * byte at a time is cut off at the deadline for the whole exchange, not only at a silence; an
 * answer larger than the cap fails without being read into memory. Neither is repeated within the
 * call. Against the simulator's `drip` and `oversized` faults, and for an answer without a
 * Content-Length, against a server of the test's own that streams until the client hangs up.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApiClient, type ApiClient } from "../../src/api/index.js";
import type { TestSimulator } from "../support/simulator.js";
import { simulatorWithProject } from "../support/simulator-suite.js";
import { waitForWith } from "../support/wait.js";
import { apiErrorOf } from "./support/client.js";

const waitFor = waitForWith({ timeoutMs: 10_000 });

let sim: TestSimulator;
let projectId: string;

simulatorWithProject((s) => ({ sim, projectId } = s));
beforeEach(async () => {
  await sim.sim.clearFaults();
});

function client(baseUrl: string, extra: Partial<Parameters<typeof createApiClient>[0]> = {}) {
  return createApiClient({
    apiKey: sim.apiKey,
    baseUrl,
    retry: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 2 },
    ...extra,
  });
}

async function using<T>(api: ApiClient, work: (api: ApiClient) => Promise<T>): Promise<T> {
  try {
    return await work(api);
  } finally {
    await api.close();
  }
}

describe("a deadline for the whole exchange", () => {
  it("cuts off an answer that drips (never silent for long), once, and frees the connection", async () => {
    // A byte every 20 ms never trips a 1 s silence timeout; the whole body would take minutes.
    await sim.sim.addFault({ route: "listOperations", kind: "drip", drip_interval_ms: 20 });
    const api = client(sim.apiUrl, {
      timeouts: { headersMs: 1000, bodyMs: 1000, deadlineMs: 1500 },
    });
    const error = await using(api, async (a) =>
      apiErrorOf(a.listOperations(projectId, { limit: 1000 })),
    );
    expect(error).toMatchObject({ kind: "timeout", code: "DEADLINE_EXCEEDED", attempts: 1 });
    expect(error.message).toMatch(/did not complete within its deadline of 1500 ms/);
    // The dripping answer was abandoned: the simulator sees the client go away.
    await waitFor("the simulator to stop sending", () => sim.simulator.streamingAnswers() === 0);
    const stats = await sim.sim.stats();
    expect(stats.routes.listOperations?.["200"]).toBe(1);
    // Other calls of the same client work meanwhile and afterwards.
    await sim.sim.clearFaults();
    const api2 = client(sim.apiUrl, { timeouts: { deadlineMs: 1500 } });
    await using(api2, async (a) => {
      expect((await a.listOperations(projectId, { limit: 10 })).operations.length).toBeGreaterThan(
        0,
      );
    });
  });
});

describe("a cap on the size of an answer", () => {
  it("refuses an answer whose Content-Length is over the cap, without retrying it", async () => {
    await sim.sim.addFault({ route: "listOperations", kind: "oversized", size_bytes: 50_000_000 });
    const api = client(sim.apiUrl, { maxResponseBytes: 4 * 1024 * 1024 });
    const error = await using(api, async (a) =>
      apiErrorOf(a.listOperations(projectId, { limit: 10 })),
    );
    expect(error).toMatchObject({
      kind: "invalid_response",
      code: "response_too_large",
      attempts: 1,
    });
    expect(error.message).toMatch(/exceeds the limit of 4194304 bytes/);
    await waitFor("the simulator to stop sending", () => sim.simulator.streamingAnswers() === 0);
  });

  it("takes an answer under the cap as usual (padding included)", async () => {
    await sim.sim.addFault({ route: "listOperations", kind: "oversized", size_bytes: 1_000_000 });
    const api = client(sim.apiUrl, { maxResponseBytes: 4 * 1024 * 1024 });
    const page = await using(api, (a) => a.listOperations(projectId, { limit: 10 }));
    expect(page.operations.length).toBeGreaterThan(0);
  });

  describe("an answer without a Content-Length", () => {
    let server: Server;
    let baseUrl: string;
    let written = 0;
    let closedEarly = false;

    beforeAll(async () => {
      server = createServer((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"operations": [], "padding": "');
        const chunk = "x".repeat(64 * 1024);
        // Up to 64 MiB, as fast as the client reads: far more than the cap.
        const pump = () => {
          while (written < 1024 && res.write(chunk)) written += 1;
          if (written >= 1024) res.end('"}');
        };
        res.on("drain", pump);
        res.on("close", () => {
          if (!res.writableEnded) closedEarly = true;
        });
        pump();
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2`;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    it("stops reading once the bytes pass the cap, and hangs up", async () => {
      const api = client(baseUrl, { maxResponseBytes: 1024 * 1024 });
      const error = await using(api, async (a) =>
        apiErrorOf(a.listOperations(projectId, { limit: 10 })),
      );
      expect(error).toMatchObject({ code: "response_too_large", attempts: 1 });
      await waitFor("the server to see the client hang up", () => closedEarly);
      expect(written).toBeLessThan(1024);
    });
  });
});
