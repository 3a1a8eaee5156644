/**
 * The image's health check (`node dist/healthcheck.js`, the Dockerfile's HEALTHCHECK): it asks
 * `/healthz` where `PGCP_LISTEN` says the exporter listens (every interface: on loopback), and
 * fails where nothing answers. Against the real server of a running exporter.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestExporter, tempDir, type TestExporter } from "../daemon/support.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";

const HEALTHCHECK = fileURLToPath(new URL("../../dist/healthcheck.js", import.meta.url));

let sim: TestSimulator;
let exporter: TestExporter;
let port: number;

beforeAll(async () => {
  sim = await startTestSimulator();
  const project = (await sim.sim.createProject({ plan: "paid" })).project.id;
  exporter = await startTestExporter({
    api: { url: sim.apiUrl, key: sim.apiKey },
    projects: [project],
    state: { dir: await tempDir() },
    listen: ":0",
  });
  port = exporter.exporter.server.port;
});
afterAll(async () => {
  await exporter.stop();
  await sim.close();
});

function check(listen: string | undefined): Promise<number> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [HEALTHCHECK],
      {
        env: {
          PATH: process.env.PATH ?? "",
          ...(listen === undefined ? {} : { PGCP_LISTEN: listen }),
        },
        timeout: 20_000,
      },
      (error) => {
        resolve(error === null ? 0 : Number(error.code));
      },
    );
  });
}

it("passes where PGCP_LISTEN points at the exporter, on an address or on every interface", async () => {
  expect(await check(`127.0.0.1:${port}`)).toBe(0);
  expect(await check(`:${port}`)).toBe(0);
  expect(await check(`0.0.0.0:${port}`)).toBe(0);
});

it("fails where nothing answers", async () => {
  await exporter.stop();
  expect(await check(`127.0.0.1:${port}`)).toBe(1);
});
