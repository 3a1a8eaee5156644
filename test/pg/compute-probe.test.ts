/**
 * The compute probe against the simulator's computes on a real PostgreSQL, over real TCP: the
 * whole exporter in-process, its probe connecting to each endpoint's loopback address as to a
 * real compute. It reads an active compute's file cache and connections; it advises a larger
 * compute after a sustained low ratio and not on a fresh start, raising `compute_advice` to
 * the sink whose `match` names it and to no other; it never connects to an idle endpoint; an
 * endpoint idle apart from the probe suspends within one probe interval after its delay; and
 * bad input (a wrong password, no extension, a view with other columns, hanging statements, a
 * port that does not answer) gives a clear reason without a retry storm, the password never
 * shown, the rest of the exporter unaffected.
 *
 * The simulator runs on the real clock at speed 1: the compute's start time it serves and the
 * server's clock are then the same clock.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { Endpoint, Operation, OperationsPage } from "../../src/contract/index.js";
import type { RawConfig } from "../../src/config/index.js";
import { startTestExporter, tempDir, type TestExporter } from "../daemon/support.js";
import { COMPUTE_PANELS } from "../../tools/dashboards/index.js";
import { loadDashboards, panelQueries, substitute } from "../dashboards/support/dashboards.js";
import { requireBinary } from "../e2e/support/binaries.js";
import { startPrometheus } from "../e2e/support/prometheus.js";
import { freePort } from "../e2e/support/server-process.js";
import { startReceiver } from "../support/receiver.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { sleep, waitFor } from "../support/wait.js";
import { describePg, dropComputeDatabase, firstEndpoint, PG_ADMIN_URL } from "./support.js";

describePg("the compute probe against the simulator's computes", () => {
  const tag = randomBytes(4).toString("hex");
  const role = { name: `pgcp_probe_${tag}`, password: `probe-secret-${tag}` };
  const database = `pgcp_probe_${tag}`;
  let t: TestSimulator;
  const cleanups: (() => Promise<unknown>)[] = [];
  const clients = new Set<pg.Client>();

  beforeAll(async () => {
    t = await startTestSimulator({
      clock: "real",
      computes: { postgresUrl: PG_ADMIN_URL ?? "", database, role },
    });
  });

  afterEach(async () => {
    await Promise.all([...clients].map((c) => c.end().catch(() => undefined)));
    clients.clear();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  afterAll(async () => {
    await (t as TestSimulator | undefined)?.close();
    await dropComputeDatabase(database, role.name);
  });

  /** The environment the exporter reads the API key and the role from. */
  function env(password = role.password): NodeJS.ProcessEnv {
    return {
      PGCP_COMPUTE_USER: role.name,
      PGCP_COMPUTE_PASSWORD: password,
    };
  }

  /** An exporter watching `projects`, its probe reading every second. */
  async function exporter(
    projects: readonly string[],
    over: RawConfig = {},
    environment: NodeJS.ProcessEnv = env(),
  ): Promise<TestExporter> {
    const e = await startTestExporter(
      {
        api: { url: t.apiUrl, key: t.apiKey },
        projects: [...projects],
        state: { dir: await tempDir() },
        poll: { interval: 0.5, fastInterval: 0.5, endpointsInterval: 1, jitter: 0 },
        metrics: { detail: "full" },
        ...over,
        computes: {
          enabled: true,
          port: t.simulator.computePort,
          database,
          sslmode: "disable",
          interval: 1,
          timeout: 1,
          ...(over.computes as RawConfig | undefined),
        },
      },
      environment,
    );
    cleanups.push(() => e.stop());
    return e;
  }

  /** A new project whose endpoint runs, with `suspendSeconds` as its auto-suspend delay. */
  async function runningEndpoint(
    suspendSeconds?: number,
  ): Promise<{ projectId: string; endpoint: Endpoint }> {
    const projectId = (await t.sim.createProject()).project.id;
    const settled = (check: (e: Endpoint) => boolean) =>
      waitFor(`${projectId}'s endpoint settled`, async () => {
        const e = await endpointOf(projectId);
        return e.pending_state === undefined && check(e) && e;
      });
    let endpoint = await settled((e) => e.current_state === "active");
    if (suspendSeconds !== undefined) {
      const path = `/projects/${projectId}/endpoints/${endpoint.id}`;
      await t.api("PATCH", path, {
        body: { endpoint: { suspend_timeout_seconds: suspendSeconds } },
      });
      endpoint = await settled((e) => e.suspend_timeout_seconds === suspendSeconds);
    }
    return { projectId, endpoint };
  }

  const endpointOf = (projectId: string): Promise<Endpoint> => firstEndpoint(t, projectId);

  async function operationsOf(projectId: string): Promise<Operation[]> {
    const page = await t.api<OperationsPage>("GET", `/projects/${projectId}/operations?limit=100`);
    return page.body.operations;
  }

  async function starts(projectId: string): Promise<number> {
    return (await operationsOf(projectId)).filter((o) => o.action === "start_compute").length;
  }

  /** A client of the endpoint, connected (which wakes it if it is idle). */
  async function client(endpoint: Endpoint): Promise<pg.Client> {
    const c = new pg.Client({
      host: endpoint.host,
      port: t.simulator.computePort,
      user: role.name,
      password: role.password,
      database,
      application_name: "a-client",
      connectionTimeoutMillis: 15_000,
    });
    c.on("error", () => undefined);
    clients.add(c);
    await c.connect();
    return c;
  }

  /** A client busy in a transaction: activity now, for as long as it stays open. */
  async function busyClient(endpoint: Endpoint): Promise<pg.Client> {
    const c = await client(endpoint);
    await c.query("BEGIN");
    await c.query("SELECT 1");
    return c;
  }

  const series = (e: TestExporter, name: string, labels: Record<string, string>) =>
    e.value(name, labels);

  /**
   * The hit ratio of the first reading that counts at least 1,000 reads: the counters are whole
   * numbers, so a reading a moment after the start (a hundred reads) shows the ratio only to
   * within a point.
   */
  const readRatio = (e: TestExporter, labels: Record<string, string>) =>
    waitFor("a reading of at least 1,000 reads", async () => {
      const hits = await series(e, "pgcp_endpoint_file_cache_hits_total", labels);
      const misses = await series(e, "pgcp_endpoint_file_cache_misses_total", labels);
      if (hits === undefined || misses === undefined || hits + misses < 1000) return undefined;
      return series(e, "pgcp_endpoint_file_cache_hit_ratio", labels);
    });

  /**
   * A running endpoint whose compute runs at `hitRatio`: restarted once set, since its counters
   * cover the time since its start and would otherwise mix in the ratio it started at.
   */
  async function runningAt(hitRatio: number): Promise<{ projectId: string; endpoint: Endpoint }> {
    const { projectId, endpoint } = await runningEndpoint();
    await t.sim.configureCompute(endpoint.id, { hit_ratio: hitRatio });
    const path = `/projects/${projectId}/endpoints/${endpoint.id}`;
    const inState = (state: string) =>
      waitFor(`${projectId}'s endpoint ${state}`, async () => {
        const e = await endpointOf(projectId);
        return e.pending_state === undefined && e.current_state === state && e;
      });
    await t.api("POST", `${path}/suspend`);
    await inState("idle");
    await t.api("POST", `${path}/start`);
    return { projectId, endpoint: await inState("active") };
  }

  it("reads the file cache hit ratio and the connections of an active compute", async () => {
    const { projectId, endpoint } = await runningAt(97.5);
    await busyClient(endpoint);
    await client(endpoint);
    const e = await exporter([projectId]);
    const labels = { project: projectId, endpoint: endpoint.id };
    expect(await readRatio(e, labels)).toBeCloseTo(97.5, 0);
    expect(await series(e, "pgcp_endpoint_connections", labels)).toBe(2);
    expect(await series(e, "pgcp_endpoint_max_connections", labels)).toBe(112);
    expect(await series(e, "pgcp_compute_probe_up", labels)).toBe(1);
    expect(await series(e, "pgcp_endpoint_file_cache_hits_total", labels)).toBeGreaterThan(0);
    expect(await series(e, "pgcp_compute_probe_state", { ...labels, state: "following" })).toBe(1);
    const page = await e.get("/");
    expect(page.text).toContain(`data-endpoint="${endpoint.id}"`);
    expect(page.text).toMatch(/97\.\d\d%/);
    expect(page.text).toContain("2 of 112</span> connections");
  });

  it("advises a larger compute after a sustained low ratio, not on a fresh start, and raises compute_advice where a sink's match names it", async () => {
    const advised = await startReceiver();
    const everything = await startReceiver();
    cleanups.push(
      () => advised.close(),
      () => everything.close(),
    );
    const { projectId, endpoint } = await runningAt(90);
    await busyClient(endpoint);
    const startedAt = Date.parse((await t.sim.compute(endpoint.id)).started_at ?? "");
    const e = await exporter(
      [projectId],
      {
        computes: { advice: { warmup: "4s", window: "3s" } },
        sinks: [
          {
            name: "advice",
            kind: "webhook",
            urlEnv: "ADVICE_URL",
            match: [{ kinds: ["compute_advice"] }],
          },
          { name: "all", kind: "webhook", urlEnv: "ALL_URL" },
        ],
      },
      { ...env(), ADVICE_URL: `${advised.url}/hook`, ALL_URL: `${everything.url}/hook` },
    );
    const labels = { project: projectId, endpoint: endpoint.id };
    const fileCache = { ...labels, reason: "file_cache" };
    // The first readings come within the warm-up: a cold cache is no reason for advice.
    expect(await readRatio(e, labels)).toBeCloseTo(90, 0);
    expect(await series(e, "pgcp_endpoint_larger_compute_advised", fileCache)).toBe(0);
    await waitFor(
      "the advice",
      async () => (await series(e, "pgcp_endpoint_larger_compute_advised", fileCache)) === 1,
    );
    // Not before the warm-up and the window have passed since the compute started (without the
    // warm-up, one window after the first reading would do).
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(7_000);
    expect(
      await series(e, "pgcp_endpoint_larger_compute_advised", { ...labels, reason: "connections" }),
    ).toBe(0);

    const [request] = await advised.waitFor((requests) => requests.length >= 1, 10_000);
    const body = request?.json as { alerts: Record<string, unknown>[] };
    expect(body.alerts).toHaveLength(1);
    expect(body.alerts[0]).toMatchObject({
      kind: "compute_advice",
      project_id: projectId,
      endpoint_id: endpoint.id,
      status: "file_cache",
      operation_id: "",
      advice: { reason: "file_cache", max_connections: 112 },
    });
    const advice = body.alerts[0]?.advice as { hit_ratio: number };
    expect(advice.hit_ratio).toBeCloseTo(90, 0);
    // The sink without a match for it never gets it.
    await sleep(1_500);
    const kinds = everything.requests.flatMap((r) =>
      (r.json as { alerts: { kind: string }[] }).alerts.map((a) => a.kind),
    );
    expect(kinds).not.toContain("compute_advice");
    const page = await e.get("/");
    expect(page.text).toContain("larger compute advised: file cache hit ratio");
  });

  it("never connects to an idle endpoint", async () => {
    const { projectId, endpoint } = await runningEndpoint();
    await t.api("POST", `/projects/${projectId}/endpoints/${endpoint.id}/suspend`);
    await waitFor("the endpoint idle", async () => {
      return (await t.sim.compute(endpoint.id)).current_state === "idle";
    });
    const before = await starts(projectId);
    const e = await exporter([projectId]);
    const labels = { project: projectId, endpoint: endpoint.id };
    await waitFor("the probe seeing the endpoint idle", async () => {
      return (await series(e, "pgcp_compute_probe_state", { ...labels, state: "idle" })) === 1;
    });
    // Several probe intervals.
    await sleep(3_500);
    expect(await starts(projectId)).toBe(before);
    expect((await t.sim.compute(endpoint.id)).current_state).toBe("idle");
    expect(await series(e, "pgcp_compute_probes_total", { result: "success" })).toBe(0);
    expect(await series(e, "pgcp_compute_probes_total", { result: "failure" })).toBe(0);
    expect(await series(e, "pgcp_endpoint_file_cache_hit_ratio", labels)).toBeUndefined();
  });

  it("lets an endpoint idle apart from the probe suspend within one probe interval after its delay", async () => {
    const suspendSeconds = 3;
    const { projectId, endpoint } = await runningEndpoint(suspendSeconds);
    const e = await exporter([projectId]);
    await waitFor("the endpoint idle after its first start", async () => {
      return (await t.sim.compute(endpoint.id)).current_state === "idle";
    });
    // A client wakes it and works for a while: the probe follows it.
    const c = await client(endpoint);
    const labels = { project: projectId, endpoint: endpoint.id };
    const workUntil = Date.now() + 3_000;
    while (Date.now() < workUntil) {
      await c.query("SELECT 1");
      await sleep(250);
    }
    const read = await series(e, "pgcp_compute_probes_total", { result: "success" });
    expect(read).toBeGreaterThanOrEqual(2);
    expect(await series(e, "pgcp_compute_probe_state", { ...labels, state: "following" })).toBe(1);
    await c.end();
    clients.delete(c);
    const leftAt = Date.now();
    const idleAt = await waitFor(
      "the endpoint suspended",
      async () => (await t.sim.compute(endpoint.id)).current_state === "idle" && Date.now(),
      20_000,
      50,
    );
    // Its delay, one probe interval, one probe and the simulator's look at its sessions.
    expect(idleAt - leftAt).toBeLessThanOrEqual((suspendSeconds + 1) * 1000 + 1_500);
    await waitFor("the probe seeing it idle", async () => {
      return (await series(e, "pgcp_compute_probe_state", { ...labels, state: "idle" })) === 1;
    });
    const after = await series(e, "pgcp_compute_probes_total", { result: "success" });
    await sleep(2_500);
    expect(await series(e, "pgcp_compute_probes_total", { result: "success" })).toBe(after);
    expect((await t.sim.compute(endpoint.id)).current_state).toBe("idle");
  });

  it("gives each kind of bad input a clear reason, without a retry storm or a shown password, and goes on with the rest", async () => {
    const [missing, other, hanging, refused, silent] = await Promise.all(
      Array.from({ length: 5 }, () => runningEndpoint()),
    );
    if (!missing || !other || !hanging || !refused || !silent) throw new Error("no endpoints");
    await t.sim.configureCompute(missing.endpoint.id, { extension: "missing" });
    await t.sim.configureCompute(other.endpoint.id, { extension: "other_columns" });
    await t.sim.configureCompute(hanging.endpoint.id, { hang: true });
    // Others use the computes without the right view: the probe's first statement sees them.
    await busyClient(missing.endpoint);
    await busyClient(other.endpoint);
    const wrongPassword = `not-${role.password}`;
    const closedPort = await freePort();
    const account = (name: string, projects: string[], computes: RawConfig = {}) => ({
      name,
      keyEnv: "SIM_KEY",
      projects,
      computes,
    });
    const e = await exporter(
      [],
      {
        api: { url: t.apiUrl },
        projects: undefined,
        accounts: [
          account("views", [missing.projectId, other.projectId, hanging.projectId]),
          account("password", [refused.projectId], { passwordEnv: "WRONG_PASSWORD" }),
          account("port", [silent.projectId], { port: closedPort }),
        ],
      },
      { ...env(), SIM_KEY: t.apiKey, WRONG_PASSWORD: wrongPassword },
    );
    const cases = [
      [missing, "no_extension"],
      [other, "view_columns"],
      [hanging, "timeout"],
      [refused, "auth"],
      [silent, "unreachable"],
    ] as const;
    for (const [{ projectId, endpoint }, reason] of cases) {
      const labels = { project: projectId, endpoint: endpoint.id };
      await waitFor(`the probe of ${reason} failing`, async () => {
        return (await series(e, "pgcp_compute_probe_up", labels)) === 0;
      });
      expect(await series(e, "pgcp_compute_probe_failures_total", { reason })).toBeGreaterThan(0);
    }
    const page = await e.get("/");
    for (const [{ endpoint }, reason] of cases) {
      const row = new RegExp(
        `data-endpoint="${endpoint.id}"[^]*?<span class="reason">${reason}</span>`,
      );
      expect(page.text).toMatch(row);
    }
    expect(page.text).toContain("neon_stat_file_cache");
    // No storm: those that saw nobody else tried once; those with clients, once an interval.
    const startedAt = Date.now();
    await sleep(3_000);
    const failures = async (reason: string) =>
      (await series(e, "pgcp_compute_probe_failures_total", { reason })) ?? 0;
    expect(await failures("auth")).toBe(1);
    expect(await failures("unreachable")).toBe(1);
    expect(await failures("timeout")).toBe(1);
    const seconds = (Date.now() - startedAt) / 1000 + 8;
    expect(await failures("no_extension")).toBeLessThanOrEqual(seconds);
    // The rest goes on: every project is polled, and the password is nowhere.
    for (const { projectId } of [missing, other, hanging, refused, silent]) {
      expect(await series(e, "pgcp_project_up", { project: projectId })).toBe(1);
    }
    const metrics = await e.get("/metrics");
    for (const text of [metrics.text, (await e.get("/")).text, e.logs.text()]) {
      expect(text).not.toContain(role.password);
      expect(text).not.toContain(wrongPassword);
    }
  });

  it("gives the dashboards' compute panels data through Prometheus", async (ctx) => {
    const binary = requireBinary("prometheus", (note) => ctx.skip(note));
    const [low, missing] = await Promise.all([runningEndpoint(), runningEndpoint()]);
    await t.sim.configureCompute(low.endpoint.id, { hit_ratio: 90 });
    await t.sim.configureCompute(missing.endpoint.id, { extension: "missing" });
    await busyClient(low.endpoint);
    await busyClient(missing.endpoint);
    const e = await exporter([low.projectId, missing.projectId], {
      metrics: { detail: "standard" },
      computes: { advice: { warmup: 0, window: "1s" } },
    });
    const port = new URL(e.exporter.server.url).port;
    const prometheus = await startPrometheus(binary, {
      job: "pgcp",
      targets: [`127.0.0.1:${port}`],
      scrapeIntervalSeconds: 1,
    });
    cleanups.push(() => prometheus.stop());
    const queries = loadDashboards()
      .flatMap(({ json }) => panelQueries(json))
      .filter((q) => (COMPUTE_PANELS as readonly string[]).includes(q.panel));
    expect(new Set(queries.map((q) => q.panel)).size).toBe(COMPUTE_PANELS.length);
    const values = { rateInterval: "1m", interval: "1m", range: "1h" };
    for (const q of queries) {
      const expr = substitute(q.expr, values);
      await waitFor(`${q.panel}: ${expr}`, async () => (await prometheus.query(expr)).length > 0);
    }
  });
});
