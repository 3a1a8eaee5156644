/**
 * What the client puts on the wire and how it reads answers the simulator does not produce
 * (schema violations, HTTP-date Retry-After, refused connections). A scripted HTTP server
 * records each request and answers from a list.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createApiClient } from "../../src/api/index.js";
import { apiErrorOf, expectNoSecret, recordingEvents } from "./support/client.js";
import { SkippingClock } from "./support/virtual-clock.js";
import { WIRE_OPERATION } from "./support/wire-operation.js";

interface Recorded {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

interface Answer {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

const KEY = "napi_wire_test_key_0123456789";
const requests: Recorded[] = [];
const answers: Answer[] = [];
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      const answer = answers.shift() ?? { status: 200, body: { endpoints: [] } };
      res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
      res.end(answer.body === undefined ? undefined : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2/`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

afterEach(() => {
  requests.length = 0;
  answers.length = 0;
});

const newClient = (extra: Partial<Parameters<typeof createApiClient>[0]> = {}) =>
  createApiClient({ apiKey: KEY, baseUrl, retry: { baseDelayMs: 1, maxDelayMs: 2 }, ...extra });

const op = WIRE_OPERATION;

describe("requests", () => {
  it("carry auth, accept, user agent and request id; content type only with a body", async () => {
    const api = newClient();
    try {
      answers.push({ status: 200, body: { operations: [], pagination: { cursor: "c" } } });
      answers.push({ status: 503, body: { code: "", message: "busy" } });
      answers.push({ status: 201, body: { endpoint: {}, operations: [] } });
      await api.listOperations("p-1", { limit: 7, cursor: "2025-01-01T00:00:00.123456Z" });
      await apiErrorOf(api.createEndpoint("p-1", { branch_id: "br-1", type: "read_only" }));
      const [list, post503, post201] = requests;
      expect(list?.method).toBe("GET");
      expect(list?.url).toBe(
        "/api/v2/projects/p-1/operations?limit=7&cursor=2025-01-01T00%3A00%3A00.123456Z",
      );
      expect(list?.headers).toMatchObject({
        authorization: `Bearer ${KEY}`,
        accept: "application/json",
        "user-agent": expect.stringMatching(/^pgcp-exporter\/\d+\.\d+\.\d+/) as unknown,
        "x-request-id": expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown,
      });
      expect(list?.headers["content-type"]).toBeUndefined();
      expect(post503?.headers["content-type"]).toBe("application/json");
      expect(JSON.parse(post503?.body ?? "")).toEqual({
        endpoint: { branch_id: "br-1", type: "read_only" },
      });
      // One request id for all attempts of one call, a new one for the next call.
      expect(post201?.headers["x-request-id"]).toBe(post503?.headers["x-request-id"]);
      expect(post201?.headers["x-request-id"]).not.toBe(list?.headers["x-request-id"]);
    } finally {
      await api.close();
    }
  });

  it("encode ids into their path segment and use the real start/suspend/restart paths", async () => {
    const api = newClient();
    try {
      const answer = { status: 200, body: { endpoint: {}, operations: [] } };
      answers.push(answer, answer, answer);
      await apiErrorOf(api.startEndpoint("p/1", "ep 1"));
      await apiErrorOf(api.suspendEndpoint("p/1", "ep 1"));
      await apiErrorOf(api.restartEndpoint("p/1", "ep 1"));
      expect(requests.map((r) => `${r.method} ${r.url}`)).toEqual([
        "POST /api/v2/projects/p%2F1/endpoints/ep%201/start",
        "POST /api/v2/projects/p%2F1/endpoints/ep%201/suspend",
        "POST /api/v2/projects/p%2F1/endpoints/ep%201/restart",
      ]);
    } finally {
      await api.close();
    }
  });
});

describe("answers", () => {
  it("a body that breaks the contract names the route, status, request id and issue path", async () => {
    const api = newClient({ retry: { maxAttempts: 1 } });
    try {
      answers.push({
        status: 200,
        body: { operations: [op, { ...op, failures_count: -1 }], pagination: { cursor: "c" } },
      });
      const error = await apiErrorOf(api.listOperations("p-1", { limit: 2 }));
      expect(error).toMatchObject({
        kind: "invalid_response",
        status: 200,
        code: "schema_mismatch",
        route: "listOperations",
        retryable: true,
      });
      expect(error.requestId).toBe(requests[0]?.headers["x-request-id"]);
      expect(error.message).toMatch(
        /^listOperations: invalid response to HTTP 200 \[schema_mismatch\]: at operations\.1\.failures_count: /,
      );
      expectNoSecret(error, KEY);
    } finally {
      await api.close();
    }
  });

  it("a full page that hands back its own cursor is an error, not an endless walk", async () => {
    const api = newClient({ retry: { maxAttempts: 1 } });
    try {
      const page = { operations: [op, op], pagination: { cursor: "same" } };
      answers.push({ status: 200, body: page }, { status: 200, body: page });
      const walk = async () => {
        for await (const _ of api.operationPages("p-1", { limit: 2 })) {
          // keep walking
        }
      };
      const error = await apiErrorOf(walk());
      expect(error).toMatchObject({ code: "inconsistent_response", route: "listOperations" });
      expect(requests).toHaveLength(2);
    } finally {
      await api.close();
    }
  });

  it("an HTTP-date Retry-After is honoured (capped), measured against the answer's Date", async () => {
    // Our clock is five hours ahead of the server's: only the server's own Date counts.
    const clock = new SkippingClock(Date.UTC(2025, 0, 1, 5, 0, 0));
    const date = "Wed, 01 Jan 2025 00:00:00 GMT";
    const { events, log } = recordingEvents();
    const api = newClient({ clock, events, retry: { maxRetryAfterMs: 20_000 } });
    try {
      answers.push({
        status: 503,
        body: { code: "", message: "maintenance" },
        headers: { "retry-after": "Wed, 01 Jan 2025 00:00:12 GMT", date },
      });
      answers.push({
        status: 429,
        body: { code: "", message: "slow down" },
        headers: { "retry-after": "Wed, 01 Jan 2025 01:00:00 GMT", date },
      });
      await api.listEndpoints("p-1");
      expect(log.retries.map((r) => [r.reason, r.delayMs, r.delaySource])).toEqual([
        ["http_503", 12_000, "retry-after"],
        ["http_429", 20_000, "retry-after"],
      ]);
      expect(log.pauses).toEqual([{ route: "listEndpoints", pauseMs: 20_000 }]);
    } finally {
      await api.close();
    }
  });

  it("a hook that throws does not fail the call", async () => {
    const api = newClient({
      events: {
        onResponse: () => {
          throw new Error("metrics broke");
        },
      },
    });
    try {
      await expect(api.listEndpoints("p-1")).resolves.toEqual([]);
    } finally {
      await api.close();
    }
  });
});

describe("connections", () => {
  it("a refused connection is retried even for a POST: nothing was sent", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const { events, log } = recordingEvents();
    const api = createApiClient({
      apiKey: KEY,
      baseUrl: `http://127.0.0.1:${port}/api/v2`,
      retry: { maxAttempts: 2, baseDelayMs: 1 },
      events,
    });
    try {
      const error = await apiErrorOf(
        api.createEndpoint("p-1", { branch_id: "br-1", type: "read_only" }),
      );
      expect(error).toMatchObject({
        kind: "network",
        code: "ECONNREFUSED",
        status: undefined,
        retryable: true,
        attempts: 2,
      });
      expect(log.transportErrors.map((e) => e.code)).toEqual(["ECONNREFUSED", "ECONNREFUSED"]);
      expectNoSecret(error, KEY);
    } finally {
      await api.close();
    }
  });

  it("a closed client refuses new calls", async () => {
    const api = newClient();
    await api.close();
    await expect(api.listEndpoints("p-1")).rejects.toThrow(/closed/);
  });
});

describe("options", () => {
  it("reject settings that cannot work", () => {
    expect(() => createApiClient({ apiKey: "" })).toThrow(TypeError);
    expect(() => createApiClient({ apiKey: KEY, baseUrl: "ftp://x/api/v2" })).toThrow(TypeError);
    expect(() => createApiClient({ apiKey: KEY, retry: { maxAttempts: 0 } })).toThrow(RangeError);
    expect(() => createApiClient({ apiKey: KEY, rateLimit: { requestsPerMinute: 0 } })).toThrow(
      RangeError,
    );
  });
});
