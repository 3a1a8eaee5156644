/**
 * The demo's computes: a throwaway PostgreSQL server (from the `postgresql` package, when its
 * server is installed) or one the `--postgres-url` flag names, on which the simulator hosts its
 * endpoints' computes for the exporter's compute probe to read; and a client that keeps one
 * endpoint busy with a cache too small for it, so that the probe follows it and, after the
 * warm-up and the window, advises a larger compute.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { chmod, chown, mkdtemp, rm } from "node:fs/promises";
import { once } from "node:events";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import type { RunningSimulator } from "../simulator/index.js";

const run = promisify(execFile);

/** The role the simulator makes for clients, and the probe connects as. */
export interface DemoRole {
  readonly name: string;
  readonly password: string;
}

export function demoRole(): DemoRole {
  return { name: "pgcp_demo_probe", password: randomBytes(12).toString("hex") };
}

/** A PostgreSQL server for the demo, or why there is none. */
export type DemoPostgres =
  | { readonly url: string; readonly label: string; stop(): Promise<void> }
  | { readonly reason: string };

/**
 * The server `url` names, or else a throwaway one: initdb into a temporary directory and
 * pg_ctl on a free loopback port (run as the `postgres` user when the demo runs as root),
 * stopped and removed by `stop`.
 */
export async function demoPostgres(url: string | undefined): Promise<DemoPostgres> {
  if (url !== undefined) {
    return { url, label: "the PostgreSQL server of --postgres-url", stop: () => Promise.resolve() };
  }
  const bin = serverBinaries();
  if (bin === undefined) {
    return { reason: "PostgreSQL's server is not installed (apt-get install postgresql)" };
  }
  const dir = await mkdtemp(path.join(tmpdir(), "pgcp-demo-postgres-"));
  try {
    const as = await runAs(dir);
    const data = path.join(dir, "data");
    await as(path.join(bin, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
    const port = await freePort();
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    const log = path.join(dir, "server.log");
    await as(path.join(bin, "pg_ctl"), ["-D", data, "-l", log, "-w", "-o", options, "start"]);
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      label: `a throwaway PostgreSQL server on 127.0.0.1:${port}`,
      stop: async () => {
        await as(path.join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"]).catch(
          () => undefined,
        );
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    const why = error instanceof Error ? error.message.split("\n")[0] : String(error);
    return { reason: `PostgreSQL's server could not be started (${why ?? "failed"})` };
  }
}

/** The newest server's bin directory (Debian installs them side by side), or one on PATH. */
function serverBinaries(): string | undefined {
  const root = "/usr/lib/postgresql";
  const has = (dir: string) =>
    existsSync(path.join(dir, "initdb")) && existsSync(path.join(dir, "pg_ctl"));
  if (existsSync(root)) {
    const newest = readdirSync(root)
      .filter((v) => /^\d+$/.test(v) && has(path.join(root, v, "bin")))
      .sort((a, b) => Number(b) - Number(a))[0];
    if (newest !== undefined) return path.join(root, newest, "bin");
  }
  return (process.env.PATH ?? "").split(path.delimiter).find((dir) => dir !== "" && has(dir));
}

/** Runs a server command as this user, or as `postgres` (owning `dir`) when this is root. */
async function runAs(
  dir: string,
): Promise<(file: string, args: readonly string[]) => Promise<unknown>> {
  const options = { timeout: 60_000 };
  if (process.getuid?.() !== 0) return (file, args) => run(file, [...args], options);
  const uid = Number((await run("id", ["-u", "postgres"])).stdout.trim());
  const gid = Number((await run("id", ["-g", "postgres"])).stdout.trim());
  await chown(dir, uid, gid);
  await chmod(dir, 0o700);
  return (file, args) => run("runuser", ["-u", "postgres", "--", file, ...args], options);
}

/** A port that was free a moment ago on 127.0.0.1. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  server.close();
  return port;
}

/** The busy endpoint's client: a statement every few seconds, and a cache too small for it. */
export interface DemoClient {
  /** The endpoint it uses now, if any. */
  endpoint(): string | undefined;
  stop(): Promise<void>;
}

/** The hit ratio the busy endpoint's compute runs at: below 99%, so the advice comes. */
const DEMO_HIT_RATIO = 93;

/**
 * Keeps the first endpoint of the first project `apiKey` lists busy: connects (waking it when
 * idle), runs a statement every `everyMs`, and starts over with the then first endpoint after
 * an error (the traffic deletes and suspends endpoints too).
 */
export function startDemoClient(
  simulator: RunningSimulator,
  apiKey: string,
  role: DemoRole,
  database: string,
  everyMs = 3_000,
): DemoClient {
  let client: pg.Client | undefined;
  let endpointId: string | undefined;
  let stopped = false;
  const drop = async () => {
    const c = client;
    client = undefined;
    endpointId = undefined;
    await c?.end().catch(() => undefined);
  };
  const step = async () => {
    if (client === undefined) {
      const endpoint = await firstEndpoint(simulator.apiUrl, apiKey);
      if (endpoint === undefined || simulator.computePort === undefined) return;
      await simulator.configureCompute(endpoint.id, { hit_ratio: DEMO_HIT_RATIO });
      const c = new pg.Client({
        host: endpoint.host,
        port: simulator.computePort,
        user: role.name,
        password: role.password,
        database,
        application_name: "pgcp-demo-client",
        connectionTimeoutMillis: 30_000,
      });
      c.on("error", () => undefined);
      client = c;
      endpointId = endpoint.id;
      await c.connect();
    }
    await client.query("SELECT 1");
  };
  let busy = false;
  const timer = setInterval(() => {
    if (stopped || busy) return;
    busy = true;
    step()
      .catch(() => drop())
      .finally(() => {
        busy = false;
      });
  }, everyMs);
  return {
    endpoint: () => endpointId,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await drop();
    },
  };
}

async function firstEndpoint(
  apiUrl: string,
  apiKey: string,
): Promise<{ id: string; host: string } | undefined> {
  const get = async <T>(route: string): Promise<T> => {
    const response = await fetch(`${apiUrl}${route}`, {
      headers: { authorization: `Bearer ${apiKey}`, accept: "application/json" },
    });
    return (await response.json()) as T;
  };
  const { projects } = await get<{ projects: { id: string }[] }>("/projects?limit=1");
  const project = projects[0];
  if (project === undefined) return undefined;
  const { endpoints } = await get<{ endpoints: { id: string; host: string }[] }>(
    `/projects/${encodeURIComponent(project.id)}/endpoints`,
  );
  return endpoints[0];
}
