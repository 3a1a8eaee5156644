/**
 * Faults that make the API misbehave the way a broken proxy or a server bug would: bodies
 * dripped or oversized, pages that overlap, cursors that cycle, pages without pagination,
 * records filed under another project. Over real HTTP, as a client sees them.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, test } from "vitest";
import {
  endpointsResponseSchema,
  errorBodySchema,
  operationsPageSchema,
  projectsPageSchema,
  RESOURCE_ID_PATTERN,
  type OperationsPage,
} from "../../src/contract/index.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { simulatorWithProject } from "../support/simulator-suite.js";
import { expectStatus, getOperation, listPage } from "./fixtures.js";
import { runsThen } from "../support/operation-steps.js";

let t: TestSimulator;
let projectId: string;
let branchIds: string[];

simulatorWithProject((s) => ({ t, projectId, branchIds } = s), {
  each: true,
  branches: 2,
  advance: 10,
});

/** Scripts `count` finished operations in the project (each its own second). */
async function script(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await t.sim.scriptOperation({
      project_id: projectId,
      branch_id: branchIds[0] ?? "",
      action: "apply_config",
      steps: runsThen("finished", 1),
    });
    await t.sim.advance(1);
  }
}

/** A raw fetch of an API path, for answers the helper cannot read. */
function rawFetch(path: string, signal?: AbortSignal): Promise<Response> {
  return fetch(t.apiUrl + path, {
    headers: { Authorization: `Bearer ${t.apiKey}` },
    ...(signal === undefined ? {} : { signal }),
  });
}

/** The body's reader, typed (the fetch typings leave its chunks untyped). */
function readerOf(response: Response): ReadableStreamDefaultReader<Uint8Array> {
  return (response.body as ReadableStream<Uint8Array>).getReader();
}

async function waitFor(condition: () => boolean, timeoutMs = 3000): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > until) throw new Error("condition not met in time");
    await sleep(10);
  }
}

const page = (limit: number, cursor?: string): Promise<OperationsPage> =>
  listPage(t, projectId, limit, cursor);

describe("drip", () => {
  test("status and headers at once, then the body a few bytes at a time", async () => {
    const path = `/projects/${projectId}/operations?limit=1`;
    const expected = (await t.api("GET", path)).text;
    await t.sim.addFault({
      route: "listOperations",
      kind: "drip",
      drip_bytes: 40,
      drip_interval_ms: 40,
      count: 1,
    });
    const started = performance.now();
    const response = await rawFetch(path);
    const headersAfter = performance.now() - started;
    expect(response.status).toBe(200);
    expect(Number(response.headers.get("content-length"))).toBe(Buffer.byteLength(expected));
    const reader = readerOf(response);
    const arrivals: number[] = [];
    const chunks: Uint8Array[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      arrivals.push(performance.now() - started);
      chunks.push(value);
    }
    const body = Buffer.concat(chunks).toString("utf8");
    expect(body).toBe(expected);
    const chunkCount = Math.ceil(Buffer.byteLength(expected) / 40);
    expect(chunkCount).toBeGreaterThan(4);
    // The headers came before the body had a chance to; the body took its chunks' pauses.
    expect(headersAfter).toBeLessThan(((chunkCount - 1) * 40) / 2);
    expect(arrivals.length).toBeGreaterThan(2);
    expect(arrivals.at(-1)!).toBeGreaterThanOrEqual((chunkCount - 1) * 40 * 0.9);
    expect(t.simulator.streamingAnswers()).toBe(0);
    // The fault is spent: the next answer is whole at once.
    expect((await t.api("GET", path)).text).toBe(expected);
  });

  test("the request is applied", async () => {
    await t.sim.addFault({
      route: "createEndpoint",
      kind: "drip",
      drip_bytes: 512,
      drip_interval_ms: 5,
    });
    const created = await t.api("POST", `/projects/${projectId}/endpoints`, {
      body: { endpoint: { branch_id: branchIds[1], type: "read_write" } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ endpoint: { branch_id: branchIds[1] } });
    const listed = endpointsResponseSchema.parse(
      expectStatus(await t.api("GET", `/projects/${projectId}/endpoints`), 200),
    );
    expect(listed.endpoints).toHaveLength(2);
  });

  test("a client that goes away stops the drip; the simulator carries on", async () => {
    await t.sim.addFault({ kind: "drip", drip_bytes: 1, drip_interval_ms: 50 });
    const controller = new AbortController();
    const response = await rawFetch(`/projects/${projectId}/operations`, controller.signal);
    expect(response.status).toBe(200);
    const reader = readerOf(response);
    const first = await reader.read();
    expect(first.value?.length).toBeGreaterThan(0);
    expect(t.simulator.streamingAnswers()).toBe(1);
    controller.abort();
    await expect(reader.read()).rejects.toThrow();
    // The server sees the connection close and stops writing (its timer with it).
    await waitFor(() => t.simulator.streamingAnswers() === 0);
    await sleep(150);
    await t.sim.clearFaults();
    expect((await t.api("GET", `/projects/${projectId}/operations`)).status).toBe(200);
  });

  test("closing the simulator cuts a dripping answer instead of waiting for it", async () => {
    const local = await startTestSimulator();
    const created = await local.sim.createProject();
    await local.sim.addFault({ kind: "drip" }); // 1 byte a second: minutes for a page
    const [fault] = await local.sim.listFaults();
    expect(fault).toMatchObject({ drip_bytes: 1, drip_interval_ms: 1000 });
    const response = await fetch(`${local.apiUrl}/projects/${created.project.id}/operations`, {
      headers: { Authorization: `Bearer ${local.apiKey}` },
    });
    const reader = readerOf(response);
    await reader.read();
    const started = performance.now();
    await local.close();
    expect(performance.now() - started).toBeLessThan(1000);
    await expect(reader.read()).rejects.toThrow();
    expect(local.simulator.streamingAnswers()).toBe(0);
  });
});

describe("oversized", () => {
  test("the real answer padded to size_bytes, still valid JSON, with a true Content-Length", async () => {
    await script(3);
    const path = `/projects/${projectId}/operations?limit=2`;
    const normal = (await t.api<OperationsPage>("GET", path)).body;
    const size = 5 * 1024 * 1024;
    await t.sim.addFault({ route: "listOperations", kind: "oversized", size_bytes: size });
    const response = await rawFetch(path);
    expect(response.status).toBe(200);
    const promised = Number(response.headers.get("content-length"));
    const text = await response.text();
    expect(promised).toBe(Buffer.byteLength(text));
    expect(promised).toBeGreaterThanOrEqual(size);
    const parsed = JSON.parse(text) as Record<string, unknown>;
    expect(typeof parsed.sim_padding).toBe("string");
    expect(operationsPageSchema.parse(parsed)).toEqual(normal);
    // A size below the real body's: the padding is empty, the body still parses.
    await t.sim.clearFaults();
    await t.sim.addFault({ route: "listOperations", kind: "oversized", size_bytes: 1 });
    const small = await t.api<Record<string, unknown>>("GET", path);
    expect(small.body.sim_padding).toBe("");
    expect(Number(small.headers.get("content-length"))).toBe(Buffer.byteLength(small.text));
  });

  test("the request is applied; an error answer is padded too", async () => {
    await t.sim.addFault({ kind: "oversized", size_bytes: 100_000, count: 2 });
    const created = await t.api("POST", `/projects/${projectId}/endpoints`, {
      body: { endpoint: { branch_id: branchIds[1], type: "read_write" } },
    });
    expect(created.status).toBe(201);
    expect(created.text.length).toBeGreaterThanOrEqual(100_000);
    const missing = await t.api("GET", `/projects/${projectId}/endpoints/ep-none-000000`);
    expect(missing.status).toBe(404);
    expect(missing.text.length).toBeGreaterThanOrEqual(100_000);
    expect(errorBodySchema.parse(missing.body).code).toBe("not_found");
    expect((await t.api("GET", `/projects/${projectId}/endpoints`)).body).toMatchObject({
      endpoints: [{}, {}],
    });
  });

  test("a client that stops reading does not hold the simulator", async () => {
    await t.sim.addFault({ kind: "oversized", size_bytes: 64 * 1024 * 1024 });
    const controller = new AbortController();
    const response = await rawFetch(`/projects/${projectId}/operations`, controller.signal);
    const reader = readerOf(response);
    await reader.read();
    controller.abort();
    await waitFor(() => t.simulator.streamingAnswers() === 0);
  });
});

describe("overlap", () => {
  test("a page asked with a cursor starts with the previous page's last record", async () => {
    await script(10);
    const truth = (await t.sim.truth(projectId)).map((o) => o.id);
    await t.sim.addFault({ kind: "overlap" }); // every route: only listOperations is hit
    const first = await page(4);
    expect(first.operations.map((o) => o.id)).toEqual(truth.slice(0, 4));
    const second = await page(4, first.pagination?.cursor);
    expect(second.operations.map((o) => o.id)).toEqual(truth.slice(3, 7));
    // Its cursor is its own last record's: the next page overlaps by one again.
    const third = await page(4, second.pagination?.cursor);
    expect(third.operations.map((o) => o.id)).toEqual(truth.slice(6, 10));
    // Requests without a cursor and other routes are not hit.
    expect((await getOperation(t, projectId, truth[0] ?? "")).id).toBe(truth[0]);
    const [fault] = await t.sim.listFaults();
    expect(fault?.fired).toBe(2);
  });

  test("count counts the pages it shifted", async () => {
    await script(6);
    const truth = (await t.sim.truth(projectId)).map((o) => o.id);
    await t.sim.addFault({ route: "listOperations", kind: "overlap", count: 1 });
    const first = await page(3);
    const overlapping = await page(3, first.pagination?.cursor);
    expect(overlapping.operations[0]?.id).toBe(truth[2]);
    const normal = await page(3, first.pagination?.cursor);
    expect(normal.operations.map((o) => o.id)).toEqual(truth.slice(3, 6));
  });
});

describe("cursor_cycle", () => {
  test("a client following cursors is sent back up: c1 → c2 → c1 → c2", async () => {
    await script(12);
    const first = await page(3);
    const c1 = first.pagination!.cursor;
    const second = await page(3, c1);
    const c2 = second.pagination!.cursor;
    await t.sim.addFault({ route: "listOperations", kind: "cursor_cycle" });
    const seen: string[] = [c1, c2];
    let cursor = c2;
    for (let i = 0; i < 4; i++) {
      const next = await page(3, cursor);
      expect(next.operations).toHaveLength(3);
      cursor = next.pagination!.cursor;
      seen.push(cursor);
    }
    expect(seen).toEqual([c1, c2, c1, c2, c1, c2]);
  });

  test("from the top it goes c1 → c2 → c1; it never sends a client down", async () => {
    await script(12);
    const c1 = (await page(3)).pagination!.cursor;
    const c2 = (await page(3, c1)).pagination!.cursor;
    const c3 = (await page(3, c2)).pagination!.cursor;
    await t.sim.addFault({ route: "listOperations", kind: "cursor_cycle" });
    // The previous request (c2) lies below c1's page: the request's own cursor instead.
    await page(3, c3);
    expect((await page(3, c1)).pagination?.cursor).toBe(c1);
    // A walk from the top: the first page is not hit, the second (nothing before it) keeps its
    // cursor, the third is sent back to the second's.
    expect((await page(3)).pagination?.cursor).toBe(c1);
    expect((await page(3, c1)).pagination?.cursor).toBe(c2);
    expect((await page(3, c2)).pagination?.cursor).toBe(c1);
    // A page that is not full keeps its cursor; a request without a cursor is not hit.
    const total = (await t.sim.truth(projectId)).length;
    const all = await page(1000, c1);
    expect(all.operations.length).toBe(total - 3);
    const unhit = await page(3);
    expect(unhit.pagination?.cursor).toBe(c1);
  });

  test("listProjects cycles the same way", async () => {
    for (let i = 0; i < 6; i++) await t.sim.createProject({ plan: "free" });
    const projectsPage = async (cursor?: string) =>
      projectsPageSchema.parse(
        expectStatus(
          await t.api("GET", `/projects?limit=2${cursor === undefined ? "" : `&cursor=${cursor}`}`),
          200,
        ),
      );
    const a = (await projectsPage()).pagination!.cursor;
    const b = (await projectsPage(a)).pagination!.cursor;
    await t.sim.addFault({ route: "listProjects", kind: "cursor_cycle", count: 2 });
    expect((await projectsPage(b)).pagination?.cursor).toBe(a);
    expect((await projectsPage(a)).pagination?.cursor).toBe(b);
    // Spent: the walk goes on.
    expect((await projectsPage(b)).pagination?.cursor).not.toBe(a);
  });
});

describe("no_pagination", () => {
  test("a full page comes without its pagination object, on both lists", async () => {
    await script(5);
    await t.sim.addFault({ kind: "no_pagination", count: 3 });
    const operations = await t.api<Record<string, unknown>>(
      "GET",
      `/projects/${projectId}/operations?limit=2`,
    );
    expect(operations.body).not.toHaveProperty("pagination");
    expect(operationsPageSchema.parse(operations.body).operations).toHaveLength(2);
    const projects = await t.api<Record<string, unknown>>("GET", "/projects?limit=1");
    expect(projects.body).not.toHaveProperty("pagination");
    // getOperation is not a list: not hit, the count is left for the next list.
    const [first] = (await page(1)).operations; // the third hit
    await getOperation(t, projectId, first!.id);
    expect((await page(2)).pagination).toBeDefined();
    const [fault] = await t.sim.listFaults();
    expect(fault?.fired).toBe(3);
  });
});

describe("foreign_project", () => {
  test("every record claims another project's id; the truth keeps the real one", async () => {
    await script(3);
    const other = (await t.sim.createProject({ plan: "free" })).project.id;
    await t.sim.addFault({ kind: "foreign_project" });
    const listed = await page(5);
    expect(listed.operations).toHaveLength(5);
    for (const record of listed.operations) expect(record.project_id).toBe(other);
    const one = await getOperation(t, projectId, listed.operations[0]!.id);
    expect(one.project_id).toBe(other);
    // Other routes are not hit.
    const endpoints = endpointsResponseSchema.parse(
      expectStatus(await t.api("GET", `/projects/${projectId}/endpoints`), 200),
    );
    expect(endpoints.endpoints[0]?.project_id).toBe(projectId);
    for (const record of await t.sim.truth(projectId)) expect(record.project_id).toBe(projectId);
  });

  test("with no other project, a made-up valid-looking id", async () => {
    const lone = await startTestSimulator();
    try {
      const created = await lone.sim.createProject();
      await lone.sim.addFault({ route: "listOperations", kind: "foreign_project", count: 1 });
      const listed = operationsPageSchema.parse(
        expectStatus(await lone.api("GET", `/projects/${created.project.id}/operations`), 200),
      );
      const claimed = listed.operations.map((o) => o.project_id);
      expect(new Set(claimed).size).toBe(1);
      expect(claimed[0]).not.toBe(created.project.id);
      expect(claimed[0]).toMatch(RESOURCE_ID_PATTERN);
    } finally {
      await lone.close();
    }
  });
});

describe("answer faults draw like the others", () => {
  test("a rate hits the same requests under the same seed", async () => {
    async function pattern(): Promise<boolean[]> {
      const local = await startTestSimulator({ seed: 7 });
      try {
        const created = await local.sim.createProject();
        await local.sim.addFault({ kind: "no_pagination", rate: 0.5 });
        const hits: boolean[] = [];
        for (let i = 0; i < 30; i++) {
          const answer = await local.api<Record<string, unknown>>(
            "GET",
            `/projects/${created.project.id}/operations`,
          );
          hits.push(!("pagination" in answer.body));
        }
        return hits;
      } finally {
        await local.close();
      }
    }
    const first = await pattern();
    expect(await pattern()).toEqual(first);
    const count = first.filter(Boolean).length;
    expect(count).toBeGreaterThan(3);
    expect(count).toBeLessThan(27);
  });
});

describe("validation", () => {
  test("invalid specs of the new kinds answer 400 naming the field", async () => {
    const cases: [unknown, RegExp][] = [
      [{ kind: "oversized" }, /size_bytes: an oversized fault needs size_bytes/],
      [{ kind: "oversized", size_bytes: 0 }, /size_bytes/],
      [{ kind: "misdated" }, /offset_seconds: a misdated fault needs offset_seconds/],
      [{ kind: "misdated", offset_seconds: 60, route: "listOperations" }, /route/],
      [{ kind: "drip", drip_interval_ms: 0 }, /drip_interval_ms/],
      [{ kind: "drip", drip_bytes: 0 }, /drip_bytes/],
      [{ kind: "status", drip_bytes: 3 }, /drip_bytes applies to kind drip only/],
      [{ kind: "drop", size_bytes: 3 }, /size_bytes applies to kind oversized only/],
      [{ kind: "latency", latency_ms: 5, offset_seconds: 3 }, /offset_seconds/],
      [{ kind: "overlap", route: "getOperation" }, /overlap applies to listOperations only/],
      [{ kind: "cursor_cycle", route: "listEndpoints" }, /route/],
      [{ kind: "no_pagination", route: "getOperation" }, /route/],
      [{ kind: "foreign_project", route: "listProjects" }, /route/],
    ];
    for (const [body, message] of cases) {
      const result = await t.request("POST", "/_sim/faults", { body });
      expect(result.status, JSON.stringify(body)).toBe(400);
      expect(errorBodySchema.parse(result.body).message, JSON.stringify(body)).toMatch(message);
    }
  });
});
