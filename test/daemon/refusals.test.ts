/**
 * What the API refuses, and records it sends with nulls, on the whole exporter in-process
 * against the simulator over real HTTP (its fault injection answers the 404s and 401s):
 * - a project whose log answers 404 is polled with backoff, says so once, and is polled again
 *   at once after a reload;
 * - a refused key (401) holds its account's polls back to one probe at a time, shows in
 *   `pgcp_account_up` and on the status page, says so once, and recovers at once after a reload;
 * - a record with `null` in an optional field is counted as an anomaly, and its project stays
 *   watched and counted exactly.
 */
import { afterEach, describe, expect, it } from "vitest";
import { resolveAccounts } from "../../src/config/index.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { sleep } from "../support/wait.js";
import { committedArrivals, truthArrivals } from "../sync/support.js";
import {
  everyProjectUp,
  startTestExporter,
  tempDir,
  waitFor,
  type LogLine,
  type TestExporter,
} from "./support.js";

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function setUp(projects: number): Promise<{ sim: TestSimulator; ids: string[] }> {
  const sim = await startTestSimulator();
  cleanups.push(() => sim.close());
  const ids: string[] = [];
  for (let i = 0; i < projects; i++) {
    ids.push((await sim.sim.createProject({ availability_checks: false })).project.id);
  }
  return { sim, ids };
}

async function exporter(sim: TestSimulator, ids: readonly string[]): Promise<TestExporter> {
  const e = await startTestExporter({
    api: { url: sim.apiUrl, key: sim.apiKey },
    projects: [...ids],
    state: { dir: await tempDir() },
  });
  cleanups.push(() => e.stop());
  await everyProjectUp(e, ids);
  return e;
}

/** Applies the running configuration again, as SIGHUP does. */
async function reload(e: TestExporter): Promise<void> {
  const outcome = await e.exporter.reload(() =>
    Promise.resolve({
      config: e.config,
      accounts: resolveAccounts(e.config, process.env),
      sinks: [],
      web: undefined,
    }),
  );
  expect(outcome.ok).toBe(true);
}

/** Answers of `status` the simulator gave on `route` (all routes when omitted). */
async function answered(sim: TestSimulator, status: number, route?: string): Promise<number> {
  const { routes } = await sim.sim.stats();
  return Object.entries(routes)
    .filter(([name]) => route === undefined || name === route)
    .reduce((n, [, byStatus]) => n + (byStatus[String(status)] ?? 0), 0);
}

function lines(e: TestExporter, match: (line: LogLine) => boolean): LogLine[] {
  return e.logs.lines().filter(match);
}

describe("a project the API no longer knows (404)", () => {
  it("is polled with backoff, said once, and polled again at once after a reload", async () => {
    const { sim, ids } = await setUp(2);
    const [healthy, gone] = ids as [string, string];
    const e = await exporter(sim, ids);
    await sim.sim.addFault({
      project_id: gone,
      route: "listOperations",
      kind: "status",
      status: 404,
    });
    await waitFor(
      "the project down",
      async () => (await e.value("pgcp_project_up", { project: gone })) === 0 || undefined,
    );

    // Every tick polls the healthy project; the gone one waits 0.5, 1, 2, 4 s… between tries.
    const polled = async () =>
      (await e.value("pgcp_state_commits_total", { result: "success" })) ?? 0;
    const before = { refused: await answered(sim, 404), healthy: await polled() };
    await sleep(6000);
    const refused = (await answered(sim, 404)) - before.refused;
    const healthyPolls = (await polled()) - before.healthy;
    expect(healthyPolls).toBeGreaterThanOrEqual(5);
    expect(refused, `${refused} refused polls against ${healthyPolls}`).toBeLessThanOrEqual(4);

    const said = lines(e, (l) => l.project === gone && l.level !== "debug");
    expect(said.map((l) => [l.level, l.msg])).toEqual([
      ["error", expect.stringContaining("the API refuses the project") as unknown],
    ]);
    expect(said[0]).toMatchObject({ status: 404, account: "default" });
    expect(await e.value("pgcp_project_up", { project: healthy })).toBe(1);
    expect(await e.value("pgcp_account_up", { account: "default" })).toBe(1);

    // The project is back (here: the fault ends); a reload tries it at once, not in minutes.
    await sim.sim.clearFaults();
    await reload(e);
    await waitFor(
      "the project up again",
      async () => (await e.value("pgcp_project_up", { project: gone })) === 1 || undefined,
      3000,
    );
    expect(lines(e, (l) => l.project === gone && l.level === "info").map((l) => l.msg)).toContain(
      "the API answers for the project again",
    );
  }, 30_000);
});

describe("a key the API refuses (401)", () => {
  it("holds the account's polls to one probe at a time, shows why, and recovers at once after a reload", async () => {
    const { sim, ids } = await setUp(5);
    const e = await exporter(sim, ids);
    await sim.sim.addFault({ kind: "status", status: 401 });
    await waitFor(
      "the account down",
      async () => (await e.value("pgcp_account_up", { account: "default" })) === 0 || undefined,
    );

    // Five projects polled at every tick would make 25 requests in five seconds.
    const before = await answered(sim, 401);
    await sleep(5000);
    const probes = (await answered(sim, 401)) - before;
    expect(probes).toBeGreaterThanOrEqual(1);
    expect(probes).toBeLessThanOrEqual(4);

    const said = lines(e, (l) => l.level === "error" || l.level === "warn");
    expect(said.map((l) => l.msg)).toEqual([
      expect.stringContaining("the API refuses the account's key") as unknown,
    ]);
    expect(said[0]).toMatchObject({ account: "default", status: 401 });
    const page = await e.get("/");
    expect(page.text).toMatch(/class="banner key-refused"[^>]*>The API refuses the key since/);
    expect(page.text).not.toContain(sim.apiKey);
    // The projects probed since are down; the others wait, their latest poll the last before
    // the refusal (pgcp_account_up says why they are not polled).
    const up = await Promise.all(ids.map((id) => e.value("pgcp_project_up", { project: id })));
    expect(up.filter((v) => v === 0).length).toBeGreaterThanOrEqual(1);

    await sim.sim.clearFaults();
    await reload(e);
    await waitFor(
      "the account up again",
      async () => (await e.value("pgcp_account_up", { account: "default" })) === 1 || undefined,
      3000,
    );
    await everyProjectUp(e, ids, "every project up again");
    expect(lines(e, (l) => l.level === "info").map((l) => l.msg)).toContain(
      "the API accepts the account's key again",
    );
    expect((await e.get("/")).text).not.toContain("key-refused");
  }, 30_000);
});

describe("a record with null in an optional field", () => {
  it("is counted as an anomaly, and its project stays watched and counted exactly", async () => {
    const { sim, ids } = await setUp(1);
    const [id] = ids as [string];
    const since = (await sim.sim.clock()).now;
    const e = await exporter(sim, ids);
    const branch = (
      await sim.api<{ branches: { id: string }[] }>("GET", `/projects/${id}/branches`)
    ).body.branches[0]!.id;
    for (const route of ["listOperations", "getOperation"] as const) {
      await sim.sim.addFault({ project_id: id, route, kind: "null_fields" });
    }
    const ops = [];
    for (const status of ["finished", "failed"]) {
      ops.push(
        await sim.sim.scriptOperation({
          project_id: id,
          branch_id: branch,
          action: "apply_config",
          steps: [
            { status: "running", after_seconds: 0 },
            { status, after_seconds: 2, ...(status === "failed" ? { error: "rejected" } : {}) },
          ],
        }),
      );
    }
    await sim.sim.advance(3);
    await waitFor(
      "both operations counted",
      async () =>
        (await e.value("pgcp_operations_total", {
          project: id,
          action: "apply_config",
          status: "failed",
        })) === 1 || undefined,
    );
    expect(
      await e.value("pgcp_api_anomalies_total", { project: id, kind: "null_field" }),
    ).toBeGreaterThanOrEqual(2);
    expect(await e.value("pgcp_project_up", { project: id })).toBe(1);
    expect(committedArrivals(e.exporter.daemon.project(id)?.state)).toEqual(
      await truthArrivals(sim, id, since),
    );
    expect(lines(e, (l) => l.anomaly === "null_field").length).toBeGreaterThan(0);
    expect(lines(e, (l) => /poll failed/.test(l.msg))).toEqual([]);
  }, 30_000);
});
