/** Authentication, error bodies, request ids, routing and the projects list. */
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import {
  errorBodySchema,
  projectsPageSchema,
  PROJECTS_LIMIT,
  type ProjectsPage,
} from "../../src/contract/index.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { expectStatus } from "./fixtures.js";
import { runsThen } from "../support/operation-steps.js";

let t: TestSimulator;

beforeEach(async () => {
  t = await startTestSimulator();
});

afterEach(async () => {
  await t.close();
});

describe("authentication", () => {
  test("every call needs the bearer key, /_sim included: 401 with an error body", async () => {
    const calls: [string, string][] = [
      ["GET", "/api/v2/projects"],
      ["GET", "/api/v2/projects/x/operations"],
      ["GET", "/_sim/clock"],
      ["POST", "/_sim/projects"],
      ["GET", "/elsewhere"],
    ];
    for (const [method, path] of calls) {
      for (const auth of [
        { apiKey: null },
        { apiKey: "wrong-key" },
        { apiKey: null, headers: { Authorization: `Basic ${t.apiKey}` } },
        { apiKey: `${t.apiKey}x` },
      ]) {
        const result = await t.request(method, path, auth);
        expect(result.status, `${method} ${path} ${JSON.stringify(auth)}`).toBe(401);
        const body = errorBodySchema.parse(result.body);
        expect(body.code).toBe("unauthorized");
        expect(body.request_id).toBe(result.headers.get("x-request-id"));
        expect(result.headers.get("www-authenticate")).toBe("Bearer");
      }
    }
  });

  test("the scheme is case-insensitive", async () => {
    const result = await t.request("GET", "/_sim/clock", {
      apiKey: null,
      headers: { Authorization: `bearer ${t.apiKey}` },
    });
    expect(result.status).toBe(200);
  });
});

describe("errors and request ids", () => {
  test("the client's X-Request-ID is echoed as a header and in the error body", async () => {
    const result = await t.api("GET", "/projects/nope/endpoints", {
      headers: { "X-Request-ID": "client-chosen-42" },
    });
    expect(result.status).toBe(404);
    expect(result.headers.get("x-request-id")).toBe("client-chosen-42");
    expect(result.body).toEqual({
      code: "not_found",
      message: "project nope not found",
      request_id: "client-chosen-42",
    });
  });

  test("without one, a request id is generated and sent on success too", async () => {
    const ok = await t.api("GET", "/projects");
    expect(ok.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const failed = await t.api("GET", "/projects/nope/operations");
    const body = errorBodySchema.parse(failed.body);
    expect(body.request_id).toBe(failed.headers.get("x-request-id"));
    expect(body.request_id).not.toBe(ok.headers.get("x-request-id"));
  });

  test("unknown routes 404, wrong methods 405 with Allow", async () => {
    expect(errorBodySchema.parse((await t.api("GET", "/branches")).body).code).toBe("not_found");
    expect((await t.request("GET", "/")).status).toBe(404);
    expect((await t.request("GET", "/_sim/nothing")).status).toBe(404);
    const wrong = await t.api("PUT", "/projects");
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("GET, POST");
    expect(errorBodySchema.parse(wrong.body).code).toBe("method_not_allowed");
  });

  test("invalid JSON and schema violations answer 400 naming the problem", async () => {
    const created = await t.sim.createProject();
    const path = `/projects/${created.project.id}/endpoints`;
    const bad = await t.api("POST", path, { body: "{" });
    expect(errorBodySchema.parse(bad.body)).toMatchObject({
      code: "bad_request",
      message: "request body is not valid JSON",
    });
    const invalid = await t.api("POST", path, { body: { endpoint: { type: "read_write" } } });
    expect(errorBodySchema.parse(invalid.body).message).toMatch(/endpoint\.branch_id/);
  });
});

describe("GET /projects", () => {
  async function page(query: string): Promise<ProjectsPage> {
    return projectsPageSchema.parse(expectStatus(await t.api("GET", `/projects${query}`), 200));
  }

  test("cursor paging over every project in creation order, 10 by default", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) ids.push((await t.sim.createProject({ plan: "free" })).project.id);
    expect((await page("")).projects).toHaveLength(PROJECTS_LIMIT.default);
    const walked: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const next = await page(`?limit=7${cursor === undefined ? "" : `&cursor=${cursor}`}`);
      walked.push(...next.projects.map((p) => p.id));
      expect(next.pagination?.cursor).toBeDefined();
      if (next.projects.length < 7) break;
      cursor = next.pagination?.cursor;
    }
    expect(walked).toEqual(ids);
  });

  test("limit 1..400, an unknown cursor 400; entries carry the real API's required fields", async () => {
    await t.sim.createProject({ plan: "paid" });
    expect((await page("?limit=400")).projects).toHaveLength(1);
    for (const bad of ["0", "401", "x"]) {
      expect((await t.api("GET", `/projects?limit=${bad}`)).status).toBe(400);
    }
    expect((await t.api("GET", "/projects?cursor=never-seen")).status).toBe(400);
    const raw = expectStatus(await t.api<Record<string, unknown>>("GET", "/projects"), 200);
    expect(raw).toMatchObject({ applications: {}, integrations: {} });
    const [entry] = raw.projects as Record<string, unknown>[];
    for (const field of [
      "active_time",
      "id",
      "platform_id",
      "region_id",
      "name",
      "pg_version",
      "proxy_host",
      "branch_logical_size_limit",
      "branch_logical_size_limit_bytes",
      "provisioner",
      "store_passwords",
      "cpu_used_sec",
      "creation_source",
      "created_at",
      "updated_at",
      "owner_id",
    ]) {
      expect(entry, field).toHaveProperty(field);
    }
  });
});

describe("clock", () => {
  test("manual clock: read and advance", async () => {
    expect(await t.sim.clock()).toEqual({ now: "2025-01-01T00:00:00.000Z", mode: "manual" });
    expect(await t.sim.advance(90.5)).toBe("2025-01-01T00:01:30.500Z");
    expect((await t.request("POST", "/_sim/clock/advance", { body: { seconds: -1 } })).status).toBe(
      400,
    );
  });

  test("a real clock follows wall time and refuses to be advanced (409)", async () => {
    const real = await startTestSimulator({
      clock: "real",
      startTime: new Date("2030-06-01T00:00:00Z"),
    });
    try {
      const before = Date.parse((await real.sim.clock()).now);
      expect(before).toBeGreaterThanOrEqual(Date.parse("2030-06-01T00:00:00Z"));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const after = await real.sim.clock();
      expect(after.mode).toBe("real");
      expect(Date.parse(after.now)).toBeGreaterThan(before);
      const refused = await real.request("POST", "/_sim/clock/advance", { body: { seconds: 1 } });
      expect(refused.status).toBe(409);
    } finally {
      await real.close();
    }
  });

  test("a real clock moves operations along without any request", async () => {
    const real = await startTestSimulator({ clock: "real" });
    try {
      const created = await real.sim.createProject();
      const op = await real.sim.scriptOperation({
        project_id: created.project.id,
        branch_id: created.branches[0]?.id ?? "",
        action: "apply_config",
        steps: runsThen("finished", 0.2),
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
      // Read in-process: a request would settle due events by itself.
      const log = real.simulator.plane.world.project(created.project.id)?.log;
      const index = log?.indexOf(op.id);
      expect(index === undefined ? undefined : log?.status(index)).toBe("finished");
    } finally {
      await real.close();
    }
  });
});
