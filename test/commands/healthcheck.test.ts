/**
 * The image's health check (`node dist/healthcheck.js`, the Dockerfile's HEALTHCHECK): it asks
 * `/healthz` where `PGCP_LISTEN` says the exporter listens (every interface: on loopback), and
 * fails where nothing answers. Against the real server of a running exporter.
 */
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import bcrypt from "bcryptjs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestExporter, tempDir, type TestExporter } from "../daemon/support.js";
import { tmpdirEnv } from "../support/run-cli.js";
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

function check(listen: string | undefined, webConfigFile?: string): Promise<number> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [HEALTHCHECK],
      {
        env: {
          PATH: process.env.PATH ?? "",
          ...tmpdirEnv(),
          ...(listen === undefined ? {} : { PGCP_LISTEN: listen }),
          ...(webConfigFile === undefined ? {} : { PGCP_WEB_CONFIG_FILE: webConfigFile }),
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

it("asks over HTTPS when the web configuration turns TLS on, also when health needs a login", async () => {
  const tls = (name: string) => fileURLToPath(new URL(`../fixtures/tls/${name}`, import.meta.url));
  const webConfig = path.join(await tempDir(), "web.yml");
  await writeFile(
    webConfig,
    `tls_server_config:\n  cert_file: ${tls("server.crt")}\n  key_file: ${tls("server.key")}\n` +
      `basic_auth_users:\n  prometheus: ${JSON.stringify(bcrypt.hashSync("pw", 4))}\n`,
  );
  const secured = await startTestExporter({
    api: { url: sim.apiUrl, key: sim.apiKey },
    projects: [(await sim.sim.createProject({ plan: "paid" })).project.id],
    state: { dir: await tempDir() },
    web: { configFile: webConfig },
  });
  try {
    const securedPort = secured.exporter.server.port;
    expect(await check(`127.0.0.1:${securedPort}`, webConfig)).toBe(0);
    // Plain HTTP on a TLS port gets no answer.
    expect(await check(`127.0.0.1:${securedPort}`)).toBe(1);
  } finally {
    await secured.stop();
  }
});

it("fails where nothing answers", async () => {
  await exporter.stop();
  expect(await check(`127.0.0.1:${port}`)).toBe(1);
});
