/**
 * Faults a user meets, on the whole exporter in-process (daemon, metrics, HTTP server) against
 * the simulator: unusable state files, a state directory that cannot be written, an API that
 * cannot be reached or refuses the key, and API errors that hit one project. Each one shows as
 * a log line that says what and where, and as a metric on `/metrics`; the daemon keeps serving
 * the other projects and `/healthz`.
 */
import { createServer } from "node:net";
import { readFile, readdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { LOCK_FILE, STATE_FORMAT, parseState, type ProjectState } from "../../src/store/index.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { committedArrivals, truthArrivals, type Arrivals } from "../sync/support.js";
import {
  findSample,
  startTestExporter,
  tempDir,
  waitFor,
  type LogLine,
  type TestExporter,
} from "./support.js";

const STATE_SUFFIX = ".state.json";

/** Garbage: invalid UTF-8, NUL bytes and a JSON-looking start. */
const GARBAGE = Buffer.from([0x7b, 0x22, 0x00, 0xff, 0xfe, 0x80, 0x0a, 0x13, 0x37, 0xc3, 0x28]);

async function readState(dir: string, projectId: string): Promise<ProjectState | undefined> {
  const file = path.join(dir, projectId + STATE_SUFFIX);
  try {
    return parseState(file, await readFile(file, "utf8"), projectId);
  } catch {
    return undefined;
  }
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  await new Promise<void>((resolve, reject) => {
    server.close((error) => {
      if (error === undefined) resolve();
      else reject(error);
    });
  });
  return address.port;
}

function linesFor(e: TestExporter, match: (line: LogLine) => boolean): LogLine[] {
  return e.logs.lines().filter(match);
}

// Independent exporters on one simulator (no faults injected there): they run side by side.
describe.concurrent("faults, on the whole exporter", () => {
  let sim: TestSimulator;

  beforeAll(async () => {
    sim = await startTestSimulator({ startTime: new Date(Date.now() - 60_000) });
  });
  afterAll(async () => {
    await sim.close();
  });

  async function exporter(ctx: TestContext, raw: Record<string, unknown>): Promise<TestExporter> {
    const e = await startTestExporter(raw);
    ctx.onTestFinished(() => e.stop());
    return e;
  }

  const project = async () =>
    (await sim.sim.createProject({ plan: "paid", availability_checks: false })).project.id;

  it("blocks a project whose state file is unusable, never touches the file, serves the others, and starts it afresh once the file is moved aside", async (ctx) => {
    const { expect } = ctx;
    const [corrupt, foreign, newer, healthy] = [
      await project(),
      await project(),
      await project(),
      await project(),
    ];
    const dir = await tempDir();
    const fileOf = (id: string) => path.join(dir, id + STATE_SUFFIX);
    const contents = new Map<string, Buffer>([
      [corrupt, GARBAGE],
      // Valid JSON, another program's document.
      [foreign, Buffer.from(JSON.stringify({ checkpoint: "2025-01-01T00:00:00Z", totals: [] }))],
      // This program's document, a format version from the future.
      [newer, Buffer.from(JSON.stringify({ format: STATE_FORMAT, version: 99, projectId: newer }))],
    ]);
    for (const [id, bytes] of contents) await writeFile(fileOf(id), bytes);

    const e = await exporter(ctx, {
      api: { url: sim.apiUrl, key: sim.apiKey },
      projects: [corrupt, foreign, newer, healthy],
      state: { dir },
    });

    // Several polls of the healthy project go by.
    await waitFor("three commits of the healthy project", async () => {
      return ((await readState(dir, healthy))?.sequence ?? 0) >= 3;
    });
    const samples = await e.samples();
    const blocked = (project: string) =>
      samples.filter((s) => s.name === "pgcp_project_blocked" && s.labels.project === project);
    expect(blocked(corrupt).map((s) => [s.labels.problem, s.value])).toEqual([["corrupt", 1]]);
    expect(blocked(foreign).map((s) => [s.labels.problem, s.value])).toEqual([["foreign", 1]]);
    expect(blocked(newer).map((s) => [s.labels.problem, s.value])).toEqual([["version", 1]]);
    expect(blocked(healthy)).toEqual([]);
    for (const id of [corrupt, foreign, newer]) {
      expect(findSample(samples, "pgcp_project_up", { project: id })?.value).toBe(0);
    }
    expect(findSample(samples, "pgcp_project_up", { project: healthy })?.value).toBe(1);

    // Each blocked project is logged with its file and its problem.
    for (const [id, problem] of [
      [corrupt, "corrupt"],
      [foreign, "foreign"],
      [newer, "version"],
    ] as const) {
      const lines = linesFor(e, (l) => l.project === id && l.level === "error");
      expect(lines.length, `error lines for ${id}`).toBeGreaterThan(0);
      expect(lines[0]).toMatchObject({ file: fileOf(id), problem });
      expect(lines[0]!.msg).toMatch(/state file is unusable/);
      expect(String(lines[0]!.error)).toContain(fileOf(id));
    }

    // The files are exactly as they were, and nothing was written next to them (the healthy
    // project's own temporary file may be there for an instant, during its commit; the
    // daemon's lock on the directory is there while it runs).
    for (const [id, bytes] of contents) expect(await readFile(fileOf(id))).toEqual(bytes);
    const names = (await readdir(dir)).filter(
      (name) => !name.startsWith(healthy) && name !== LOCK_FILE,
    );
    expect(names.sort()).toEqual([corrupt, foreign, newer].map((id) => id + STATE_SUFFIX).sort());
    expect((await e.get("/healthz")).status).toBe(200);
    expect((await e.get("/readyz")).status).toBe(200);

    // The operator moves the corrupt file aside: the project starts afresh, no restart.
    await rename(fileOf(corrupt), fileOf(corrupt) + ".broken");
    await waitFor("the corrupt project to be polled", async () => {
      return (await e.value("pgcp_project_up", { project: corrupt })) === 1;
    });
    const after = await e.samples();
    expect(
      after.filter((s) => s.name === "pgcp_project_blocked").map((s) => s.labels.project),
    ).toEqual(expect.arrayContaining([foreign, newer]));
    expect(findSample(after, "pgcp_project_blocked", { project: corrupt })).toBeUndefined();
    expect((await readState(dir, corrupt))?.projectId).toBe(corrupt);
    expect(await readFile(fileOf(corrupt) + ".broken")).toEqual(GARBAGE);
    expect(await readFile(fileOf(foreign))).toEqual(contents.get(foreign));
  });

  it("keeps running when the state directory cannot be written: commits fail, are logged and counted", async (ctx) => {
    const { expect } = ctx;
    // Running as root, permissions do not stop writes: a regular file in the path does.
    const base = await tempDir();
    await writeFile(path.join(base, "file"), "not a directory\n");
    const dir = path.join(base, "file", "state");
    const id = await project();

    const e = await exporter(ctx, {
      api: { url: sim.apiUrl, key: sim.apiKey },
      projects: [id],
      state: { dir },
    });
    expect((await e.get("/healthz")).status).toBe(200);

    const failures = () => e.value("pgcp_state_commits_total", { result: "failure" });
    const first = await waitFor("a failed commit", async () => (await failures()) ?? false);
    expect(first).toBeGreaterThanOrEqual(1);
    await waitFor("another failed commit", async () => ((await failures()) ?? 0) > first);

    const start = linesFor(e, (l) => /state store cannot be opened/.test(l.msg));
    expect(start).toHaveLength(1);
    expect(start[0]).toMatchObject({ level: "error", file: dir, problem: "unwritable" });
    expect(String(start[0]!.error)).toContain("ENOTDIR");
    const commits = linesFor(e, (l) => l.project === id && /state commit failed/.test(l.msg));
    expect(commits.length).toBeGreaterThanOrEqual(2);
    expect(commits[0]).toMatchObject({
      level: "error",
      file: path.join(dir, id + STATE_SUFFIX),
      problem: "unwritable",
    });
    expect(await e.value("pgcp_project_up", { project: id })).toBe(0);
    expect(await e.value("pgcp_state_commits_total", { result: "success" })).toBeUndefined();
    expect((await e.get("/healthz")).status).toBe(200);
    expect(await readFile(path.join(base, "file"), "utf8")).toBe("not a directory\n");
  });

  it("keeps running when the API cannot be reached, and says so per project", async (ctx) => {
    const { expect } = ctx;
    const port = await closedPort();
    const e = await exporter(ctx, {
      api: { url: `http://127.0.0.1:${port}/api/v2`, key: "some-key-1234" },
      projects: ["unreachable-project-1", "unreachable-project-2"],
      state: { dir: await tempDir() },
    });

    const network = () =>
      e.value("pgcp_api_requests_total", { route: "listOperations", code: "network" });
    const first = await waitFor("network errors", async () => (await network()) ?? false);
    await waitFor("more network errors", async () => ((await network()) ?? 0) > first);

    for (const id of ["unreachable-project-1", "unreachable-project-2"]) {
      const lines = await waitFor(`poll failures logged for ${id}`, () => {
        const found = linesFor(e, (l) => l.project === id && /poll failed/.test(l.msg));
        return found.length >= 1 && found;
      });
      expect(lines[0]).toMatchObject({ level: "warn", kind: "network", route: "listOperations" });
      expect(lines[0]!.msg).toMatch(/nothing committed/);
      expect(await e.value("pgcp_project_up", { project: id })).toBe(0);
    }
    expect((await e.get("/healthz")).status).toBe(200);
    const ready = await e.get("/readyz");
    expect(ready.status).toBe(503);
    expect(ready.text).toMatch(/no poll has completed/);
  });

  it("reports a rejected key (401) without ever writing the key", async (ctx) => {
    const { expect } = ctx;
    const id = await project();
    const wrongKey = `wrong-key-${String(Math.random()).slice(2)}`;
    const e = await exporter(ctx, {
      api: { url: sim.apiUrl, key: wrongKey },
      projects: [id],
      state: { dir: await tempDir() },
    });

    const rejected = () =>
      e.value("pgcp_api_requests_total", { route: "listOperations", code: "401" });
    const first = await waitFor("401 answers", async () => (await rejected()) ?? false);
    await waitFor("more 401 answers", async () => ((await rejected()) ?? 0) > first);

    // Said once, not once a poll (test/daemon/refusals.test.ts has the backoff).
    const lines = linesFor(e, (l) => l.project === id && l.level !== "debug");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "error", status: 401, route: "listOperations" });
    expect(lines[0]?.msg).toContain("the API refuses the account's key");
    expect(await e.value("pgcp_project_up", { project: id })).toBe(0);
    expect(await e.value("pgcp_account_up", { account: "default" })).toBe(0);
    expect((await e.get("/healthz")).status).toBe(200);

    const metricsText = (await e.get("/metrics")).text;
    expect(e.logs.text()).not.toContain(wrongKey);
    expect(metricsText).not.toContain(wrongKey);
    expect(e.logs.text()).not.toContain(sim.apiKey);
  });
});

describe("a fault that hits one project", () => {
  let sim: TestSimulator;
  let e: TestExporter | undefined;

  beforeAll(async () => {
    sim = await startTestSimulator({ startTime: new Date(Date.now() - 60_000) });
  });
  afterAll(async () => {
    await e?.stop();
    await sim.close();
  });

  it("does not stop the other projects from being committed, and counts stay exact", async () => {
    const created = await Promise.all(
      [0, 1].map(() => sim.sim.createProject({ plan: "paid", availability_checks: false })),
    );
    const healthy = created.map((c) => ({ id: c.project.id, branch: c.branches[0]!.id }));
    // A project the API does not know: every poll of it fails with 404.
    const missing = "no-such-project-404";
    // Their own first operations end before the exporter's first start.
    await sim.sim.advance(10);
    const dir = await tempDir();
    e = await startTestExporter({
      api: { url: sim.apiUrl, key: sim.apiKey },
      projects: [...healthy.map((p) => p.id), missing],
      state: { dir },
    });
    const exporter = e;
    const since = (await sim.sim.clock()).now;
    await waitFor("the first commits", async () => {
      for (const p of healthy) {
        if ((await exporter.value("pgcp_project_up", { project: p.id })) !== 1) return false;
      }
      return true;
    });

    // Traffic on the healthy projects, while the API fails list requests for a while.
    await sim.sim.addFault({ route: "listOperations", kind: "status", status: 500, count: 4 });
    for (const p of healthy) {
      for (let i = 0; i < 3; i++) {
        await sim.sim.scriptOperation({
          project_id: p.id,
          branch_id: p.branch,
          action: i === 0 ? "apply_config" : "create_branch",
          steps: [
            { status: "running", after_seconds: 0 },
            i === 2
              ? { status: "failed", after_seconds: 2, error: "quota exceeded" }
              : { status: "finished", after_seconds: 2 },
          ],
        });
      }
    }
    await sim.sim.advance(5);

    const counted = async (project: string): Promise<Arrivals> => {
      const out: Arrivals = {};
      for (const s of await exporter.samples()) {
        if (s.name === "pgcp_operations_total" && s.labels.project === project && s.value > 0) {
          out[`${s.labels.action ?? ""} ${s.labels.status ?? ""}`] = s.value;
        }
      }
      return out;
    };
    const expected = await Promise.all(healthy.map((p) => truthArrivals(sim, p.id, since)));
    expect(expected[0]).toEqual({
      "apply_config finished": 1,
      "create_branch finished": 1,
      "create_branch failed": 1,
    });
    await waitFor("the operations to be counted", async () => {
      for (const [i, p] of healthy.entries()) {
        if (JSON.stringify(await counted(p.id)) !== JSON.stringify(expected[i])) return false;
      }
      return true;
    });
    expect((await sim.sim.listFaults())[0]?.fired).toBe(4);

    // Commits go on; the counts do not move once exact, and the files agree with /metrics.
    const sequence = (await readState(dir, healthy[0]!.id))?.sequence ?? 0;
    await waitFor("more commits", async () => {
      return ((await readState(dir, healthy[0]!.id))?.sequence ?? 0) > sequence + 1;
    });
    for (const [i, p] of healthy.entries()) {
      expect(await counted(p.id)).toEqual(expected[i]);
      expect(committedArrivals(await readState(dir, p.id))).toEqual(expected[i]);
    }

    // The missing project: down, its refusal logged once with its status, no state written (a
    // 500 it met first backs it off: its 404 may come a few seconds later).
    expect(await exporter.value("pgcp_project_up", { project: missing })).toBe(0);
    const refusedLines = () =>
      linesFor(exporter, (l) => l.project === missing && /the API refuses the project/.test(l.msg));
    await waitFor("the missing project's refusal", () => refusedLines().length > 0 || undefined);
    const lines = refusedLines();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "error", status: 404, route: "listOperations" });
    expect(
      await exporter.value("pgcp_api_requests_total", { route: "listOperations", code: "500" }),
    ).toBe(4);
    expect(await readdir(dir)).not.toContain(missing + STATE_SUFFIX);
    expect((await exporter.get("/healthz")).status).toBe(200);
  });
});
