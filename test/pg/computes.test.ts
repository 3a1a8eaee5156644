/**
 * The simulator's computes on a real PostgreSQL server (`src/simulator/computes`), over real
 * TCP with `pg`: each endpoint's address forwards to the server and its sessions see that
 * endpoint's `neon_stat_file_cache`; a connection wakes an idle compute; a client busy in a
 * transaction holds off auto-suspend while an idle one does not, and a stop ends the sessions
 * and resets the statistics; the switches for a missing extension, other columns and hanging
 * statements; a wrong password, a disabled and a deleted endpoint are refused.
 *
 * The manual clock moves simulated time; `syncComputes()` makes the host look at its sessions
 * at once instead of within its 200 ms.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { Endpoint, Operation, OperationsPage } from "../../src/contract/index.js";
import { OTHER_FILE_CACHE_COLUMNS } from "../../src/simulator/index.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { waitFor } from "../support/wait.js";
import { describePg, dropComputeDatabase, firstEndpoint, PG_ADMIN_URL } from "./support.js";

const FILE_CACHE_COLUMNS = [
  "file_cache_misses",
  "file_cache_hits",
  "file_cache_used",
  "file_cache_writes",
  "file_cache_hit_ratio",
];

/** Page reads per second of a 0.25 CU compute (READS_PER_CU_SECOND × 0.25). */
const READS_PER_SECOND = 500;

interface Created {
  readonly projectId: string;
  readonly endpoint: Endpoint;
}

interface FileCacheRow {
  file_cache_misses: string;
  file_cache_hits: string;
  file_cache_used: string;
  file_cache_writes: string;
  file_cache_hit_ratio: string | null;
}

async function failure(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  return promise.then(
    () => {
      throw new Error("expected a failure");
    },
    (error: unknown) => error as Error & { code?: string },
  );
}

describePg("the simulator's computes on a real PostgreSQL", () => {
  const tag = randomBytes(4).toString("hex");
  const role = { name: `pgcp_client_${tag}`, password: `client-${tag}` };
  const database = `pgcp_computes_${tag}`;
  let t: TestSimulator;
  const clients = new Set<pg.Client>();

  beforeAll(async () => {
    t = await startTestSimulator({
      computes: { postgresUrl: PG_ADMIN_URL ?? "", database, role },
    });
  });

  afterEach(async () => {
    await Promise.all([...clients].map((c) => c.end().catch(() => undefined)));
    clients.clear();
  });

  afterAll(async () => {
    // Also when the simulator did not start: the database and the role may exist already.
    await (t as TestSimulator | undefined)?.close();
    await dropComputeDatabase(database, role.name);
  });

  /** A client of the endpoint's address on the computes' port (not yet connected). */
  function clientOf(endpoint: Endpoint, password = role.password): pg.Client {
    const client = new pg.Client({
      host: endpoint.host,
      port: t.simulator.computePort,
      user: role.name,
      password,
      database,
      connectionTimeoutMillis: 10_000,
    });
    // A stop ends the session: the test reads the error where it expects one.
    client.on("error", () => undefined);
    clients.add(client);
    return client;
  }

  async function connected(endpoint: Endpoint): Promise<pg.Client> {
    const client = clientOf(endpoint);
    await client.connect();
    return client;
  }

  /** New projects' endpoints, running (their timeline and start take 4 simulated seconds). */
  async function runningEndpoints(
    count: number,
  ): Promise<{ projectId: string; endpoint: Endpoint }[]> {
    const projects: string[] = [];
    for (let i = 0; i < count; i++) projects.push((await t.sim.createProject()).project.id);
    await t.sim.advance(4);
    return Promise.all(
      projects.map(async (projectId) => ({ projectId, endpoint: await endpointOf(projectId) })),
    );
  }

  async function runningEndpoint(): Promise<{ projectId: string; endpoint: Endpoint }> {
    const [created] = await runningEndpoints(1);
    if (created === undefined) throw new Error("no endpoint");
    return created;
  }

  const endpointOf = (projectId: string): Promise<Endpoint> => firstEndpoint(t, projectId);

  async function fileCache(client: pg.Client): Promise<FileCacheRow[]> {
    return (await client.query<FileCacheRow>("SELECT * FROM neon_stat_file_cache")).rows;
  }

  /** The project's operations, as the API's operations log lists them. */
  async function operationsOf(projectId: string): Promise<Operation[]> {
    const page = await t.api<OperationsPage>("GET", `/projects/${projectId}/operations?limit=100`);
    return page.body.operations;
  }

  async function startCount(projectId: string): Promise<number> {
    return (await operationsOf(projectId)).filter((o) => o.action === "start_compute").length;
  }

  it("forwards each endpoint's address to the server, where its sessions see its own numbers", async () => {
    const [a, b] = (await runningEndpoints(2)) as [Created, Created];
    expect(a.endpoint.host).toMatch(/^127\.\d+\.\d+\.\d+$/);
    expect(b.endpoint.host).not.toBe(a.endpoint.host);
    await t.sim.configureCompute(a.endpoint.id, { hit_ratio: 97.5 });
    // 4 GiB against a 0.25 CU compute's 0.8 GB cache: about a fifth is served from it.
    await t.sim.configureCompute(b.endpoint.id, { working_set_bytes: 4 * 1024 ** 3 });
    await t.sim.advance(60);

    const ca = await connected(a.endpoint);
    const cb = await connected(b.endpoint);
    const result = await ca.query("SELECT * FROM neon_stat_file_cache");
    expect(result.fields.map((f) => f.name)).toEqual(FILE_CACHE_COLUMNS);
    const [rowA] = result.rows as FileCacheRow[];
    const [rowB, ...more] = await fileCache(cb);
    expect(more).toEqual([]);
    // Both started together, so both read as much; they differ by what the cache serves.
    const reads = (row: FileCacheRow | undefined) =>
      Number(row?.file_cache_hits) + Number(row?.file_cache_misses);
    expect(reads(rowA)).toBe(READS_PER_SECOND * 60);
    expect(reads(rowB)).toBe(READS_PER_SECOND * 60);
    expect(rowA?.file_cache_hit_ratio).toBe("97.50");
    expect(Number(rowB?.file_cache_hit_ratio)).toBeCloseTo(
      (99.9 * 0.8 * 1024 ** 3) / 4 / 1024 ** 3,
      1,
    );
    const view = await t.sim.compute(a.endpoint.id);
    expect(view.file_cache.file_cache_hits).toBe(Number(rowA?.file_cache_hits));
    expect(view.sessions).toBe(1);

    // What a compute of its own shows: its sessions only, its start.
    const activity = await ca.query<{ n: string }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE backend_type = 'client backend'",
    );
    expect(activity.rows[0]?.n).toBe("1");
    const backends = await cb.query<{ numbackends: number }>(
      "SELECT numbackends FROM pg_stat_database WHERE datname = current_database()",
    );
    expect(backends.rows[0]?.numbackends).toBe(1);
    const started = await ca.query<{ at: Date }>("SELECT pg_postmaster_start_time() AS at");
    expect(started.rows[0]?.at.toISOString().replace(".000", "")).toBe(view.started_at);

    // The numbers follow simulated time while the compute runs.
    await t.sim.advance(30);
    await t.simulator.syncComputes();
    expect(reads((await fileCache(ca))[0])).toBe(READS_PER_SECOND * 90);
  });

  it("starts an idle compute for a connection, and holds the connection until it runs", async () => {
    const { projectId, endpoint } = await runningEndpoint();
    await t.api("POST", `/projects/${projectId}/endpoints/${endpoint.id}/suspend`);
    await t.sim.advance(1);
    expect((await endpointOf(projectId)).current_state).toBe("idle");
    const starts = await startCount(projectId);

    const client = clientOf(endpoint);
    const connecting = client.connect();
    const start = await waitFor("a start_compute for the connection", async () =>
      (await operationsOf(projectId)).find(
        (o) => o.action === "start_compute" && o.status === "running",
      ),
    );
    expect(await startCount(projectId)).toBe(starts + 1);
    expect(start.endpoint_id).toBe(endpoint.id);
    await t.sim.advance(2);
    await connecting;
    expect((await client.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    expect((await endpointOf(projectId)).current_state).toBe("active");
  });

  it("suspends a compute whose clients are idle, not one with a transaction open, and resets its numbers on the next start", async () => {
    const endpoints = await runningEndpoints(3);
    for (const { projectId, endpoint } of endpoints) {
      await t.api("PATCH", `/projects/${projectId}/endpoints/${endpoint.id}`, {
        body: { endpoint: { suspend_timeout_seconds: 60 } },
      });
    }
    await t.sim.advance(1);
    const [busy, idle, none] = endpoints.map((e) => e.endpoint) as [Endpoint, Endpoint, Endpoint];
    const inTransaction = await connected(busy);
    await inTransaction.query("BEGIN");
    await inTransaction.query("SELECT 1");
    const idleClient = await connected(idle);
    await idleClient.query("SELECT 1");
    const idleEnded = new Promise<Error & { code?: string }>((resolve) => {
      idleClient.on("error", resolve);
    });
    await t.simulator.syncComputes();

    await t.sim.advance(62);
    const state = async (e: Endpoint) => (await t.sim.compute(e.id)).current_state;
    expect(await state(none)).toBe("idle");
    expect(await state(idle)).toBe("idle");
    expect(await state(busy)).toBe("active");
    expect((await idleEnded).code).toBe("57P01");
    expect((await inTransaction.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    const before = (await t.sim.compute(none.id)).file_cache;

    // Once the transaction ends, nothing holds the compute any more.
    await inTransaction.query("COMMIT");
    await t.simulator.syncComputes();
    await t.sim.advance(62);
    expect(await state(busy)).toBe("idle");

    // The next start begins from nothing.
    const woken = clientOf(none);
    const connecting = woken.connect();
    await waitFor(
      "the start of the suspended compute",
      async () => (await endpointOf(none.project_id)).pending_state === "active",
    );
    await t.sim.advance(2);
    await connecting;
    const [fresh] = await fileCache(woken);
    expect(Number(fresh?.file_cache_hits) + Number(fresh?.file_cache_misses)).toBe(0);
    expect(fresh?.file_cache_hit_ratio).toBeNull();
    await t.sim.advance(10);
    await t.simulator.syncComputes();
    const [later] = await fileCache(woken);
    expect(Number(later?.file_cache_hits) + Number(later?.file_cache_misses)).toBe(
      READS_PER_SECOND * 10,
    );
    expect(Number(later?.file_cache_hits)).toBeLessThan(before.file_cache_hits);
  });

  it("makes the view missing, gives it other columns, and makes statements hang, as a test says", async () => {
    const { endpoint } = await runningEndpoint();
    const client = await connected(endpoint);
    expect(await fileCache(client)).toHaveLength(1);

    await t.sim.configureCompute(endpoint.id, { extension: "missing" });
    const missing = await failure(fileCache(client));
    expect(missing.code).toBe("42P01");
    expect(missing.message).toBe('relation "neon_stat_file_cache" does not exist');

    await t.sim.configureCompute(endpoint.id, { extension: "other_columns" });
    const other = await client.query("SELECT * FROM neon_stat_file_cache");
    expect(other.fields.map((f) => f.name)).toEqual([...OTHER_FILE_CACHE_COLUMNS]);
    expect(
      (await failure(client.query("SELECT file_cache_hit_ratio FROM neon_stat_file_cache"))).code,
    ).toBe("42703");

    await t.sim.configureCompute(endpoint.id, { extension: "installed", hang: true });
    await client.query("SET statement_timeout = 300");
    const hung = await failure(fileCache(client));
    expect(hung.code).toBe("57014");
    expect((await failure(client.query("SELECT count(*) FROM pg_stat_activity"))).code).toBe(
      "57014",
    );
    await t.sim.configureCompute(endpoint.id, { hang: false });
    expect(await fileCache(client)).toHaveLength(1);
  });

  it("refuses a wrong password, a disabled endpoint and a deleted one", async () => {
    const { projectId, endpoint } = await runningEndpoint();
    const wrong = await failure(clientOf(endpoint, "not-the-password").connect());
    expect(wrong.code).toBe("28P01");

    await t.api("PATCH", `/projects/${projectId}/endpoints/${endpoint.id}`, {
      body: { endpoint: { disabled: true } },
    });
    await t.sim.advance(2);
    const disabled = await failure(clientOf(endpoint).connect());
    expect(disabled.message).toMatch(/disabled/);

    await t.api("DELETE", `/projects/${projectId}/endpoints/${endpoint.id}`);
    const deleted = await failure(clientOf(endpoint).connect());
    expect(deleted.code).toBe("ECONNREFUSED");
    expect((await t.request("GET", `/_sim/endpoints/${endpoint.id}/compute`)).status).toBe(404);
  });

  it("checks the settings of the control interface", async () => {
    const { endpoint } = await runningEndpoint();
    const path = `/_sim/endpoints/${endpoint.id}/compute`;
    expect((await t.request("POST", path, { body: { hit_ratio: 101 } })).status).toBe(400);
    expect((await t.request("POST", path, { body: { extension: "gone" } })).status).toBe(400);
    expect((await t.request("POST", path, { body: { speed: 1 } })).status).toBe(400);
    const set = await t.sim.configureCompute(endpoint.id, { hit_ratio: 90 });
    expect(set).toMatchObject({ hit_ratio: 90, hit_ratio_set: true, host: endpoint.host });
    const cleared = await t.sim.configureCompute(endpoint.id, { hit_ratio: null });
    expect(cleared).toMatchObject({ hit_ratio: 99.9, hit_ratio_set: false });
  });
});
