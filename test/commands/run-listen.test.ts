/**
 * `pgcp-exporter run` and `demo` that cannot have their address, as the built command: each exits
 * 1 at once with one line naming the address and the reason, before it polls anything; `run`
 * leaves its state directory free for the next run, `demo` leaves no temporary folder behind.
 */
import { existsSync } from "node:fs";
import { mkdir, readdir } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { LOCK_FILE } from "../../src/store/index.js";
import { runCli } from "../support/run-cli.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { removeDir, tempDir } from "../support/temp-dir.js";

let sim: TestSimulator;
let taken: Server;
let port: number;
let dir: string;

beforeAll(async () => {
  sim = await startTestSimulator();
  await sim.sim.createProject({ plan: "paid" });
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  const address = taken.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  port = address.port;
  dir = await tempDir("pgcp-listen-");
});
afterAll(async () => {
  await new Promise((resolve) => taken.close(resolve));
  await sim.close();
  await removeDir(dir);
});

const run = (args: string[]) =>
  runCli(["run", ...args], { PGCP_API_KEY: sim.apiKey, PGCP_API_URL: sim.apiUrl });

it("exits 1 on a port in use, naming the address and the reason, having polled nothing", async () => {
  await sim.sim.resetStats();
  const stateDir = path.join(dir, "state");
  const result = await run([
    "--projects",
    "all",
    "--state-dir",
    stateDir,
    "--listen",
    `127.0.0.1:${port}`,
    "--log-format",
    "json",
  ]);
  expect(result.code).toBe(1);
  const lines = result.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const fatal = lines.filter((l) => l.level === "fatal");
  expect(fatal).toHaveLength(1);
  expect(fatal[0]?.msg).toBe("exporter could not start");
  expect(fatal[0]?.error).toBe(
    `cannot listen on 127.0.0.1:${port}: the address is in use by another process (choose another with --listen or PGCP_LISTEN)`,
  );
  // Nothing was asked of the API: no discovery, no poll.
  expect((await sim.sim.stats()).total).toBe(0);
  expect(lines.some((l) => l.msg === "exporter started")).toBe(false);
  // The state directory is not left locked.
  expect(existsSync(path.join(stateDir, LOCK_FILE))).toBe(false);
});

it("demo honours PGCP_LISTEN, says which port is taken and how to choose another, and cleans up", async () => {
  const tmp = path.join(dir, "tmp");
  await mkdir(tmp, { recursive: true });
  const result = await runCli(["demo"], { PGCP_LISTEN: `127.0.0.1:${port}`, TMPDIR: tmp });
  expect(result.code).toBe(1);
  expect(result.stderr).toContain(
    `pgcp-exporter demo: cannot listen on 127.0.0.1:${port}: the address is in use by another process (choose another with --listen or PGCP_LISTEN)`,
  );
  expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
  expect(await readdir(tmp)).toEqual([]);
});
