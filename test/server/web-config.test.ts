/**
 * The web configuration file (`--web.config.file`): TLS and basic auth on the exporter's own
 * server. A running exporter (against the simulator) is asked by a real TLS client (Node's
 * https, trusting the test CA of test/fixtures/tls) with no, wrong and right passwords, and
 * with and without client certificates; a real Prometheus server (Debian's `prometheus`)
 * scrapes it over HTTPS with basic auth, as an operator's would. Bad files are refused by
 * `check-config` and `run` with the setting at fault, and never with a hash or password.
 */
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { request } from "node:https";
import path from "node:path";
import { fileURLToPath } from "node:url";
import bcrypt from "bcryptjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestExporter, tempDir, waitFor, type TestExporter } from "../daemon/support.js";
import { requireBinary } from "../e2e/support/binaries.js";
import { startPrometheus } from "../e2e/support/prometheus.js";
import { runCli } from "../support/run-cli.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";

const TLS = (name: string) => fileURLToPath(new URL(`../fixtures/tls/${name}`, import.meta.url));
const CA = readFileSync(TLS("ca.crt"));

const PASSWORD = "correct horse battery staple";
const HASH = bcrypt.hashSync(PASSWORD, 10);

interface Answer {
  readonly status: number;
  readonly text: string;
  readonly headers: Record<string, string | string[] | undefined>;
}

/** GET over HTTPS trusting the test CA; rejects when the handshake fails. */
function get(
  url: string,
  options: { auth?: string; cert?: string; key?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        ca: CA,
        ...(options.cert === undefined ? {} : { cert: readFileSync(TLS(options.cert)) }),
        ...(options.key === undefined ? {} : { key: readFileSync(TLS(options.key)) }),
        ...(options.auth === undefined
          ? {}
          : {
              headers: { authorization: `Basic ${Buffer.from(options.auth).toString("base64")}` },
            }),
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
        res.on("end", () => {
          resolve({ status: res.statusCode ?? 0, text, headers: res.headers });
        });
      },
    );
    req.on("error", reject);
    req.end();
  });
}

async function writeWebConfig(dir: string, yaml: string): Promise<string> {
  const file = path.join(dir, `web-${Math.random().toString(36).slice(2)}.yml`);
  await writeFile(file, yaml);
  return file;
}

const TLS_AND_USER = (extra = "") => `tls_server_config:
  cert_file: ${TLS("server.crt")}
  key_file: ${TLS("server.key")}
${extra}basic_auth_users:
  prometheus: ${JSON.stringify(HASH)}
http_server_config:
  headers:
    X-Frame-Options: deny
`;

let sim: TestSimulator;
let project: string;
let dir: string;

beforeAll(async () => {
  sim = await startTestSimulator();
  project = (await sim.sim.createProject({ plan: "paid" })).project.id;
  dir = await tempDir("pgcp-web-");
});
afterAll(async () => {
  await sim.close();
});

async function exporterWith(web: Record<string, unknown>): Promise<TestExporter> {
  return startTestExporter({
    api: { url: sim.apiUrl, key: sim.apiKey },
    projects: [project],
    state: { dir: await tempDir() },
    web,
  });
}

describe("TLS with basic auth", () => {
  let exporter: TestExporter;
  let base: string;

  beforeAll(async () => {
    exporter = await exporterWith({ configFile: await writeWebConfig(dir, TLS_AND_USER()) });
    base = `https://localhost:${exporter.exporter.server.port}`;
  });
  afterAll(async () => {
    await exporter.stop();
  });

  it("serves /metrics over HTTPS to the right user only", async () => {
    expect(exporter.exporter.server.url).toMatch(/^https:\/\//);
    const anonymous = await get(`${base}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers["www-authenticate"]).toMatch(/^Basic realm=/);
    expect(anonymous.text).not.toContain("pgcp_");

    const wrong = await get(`${base}/metrics`, { auth: "prometheus:Tr0ub4dor&3" });
    expect(wrong.status).toBe(401);
    expect(wrong.text).not.toContain("pgcp_");
    const stranger = await get(`${base}/metrics`, { auth: `someone:${PASSWORD}` });
    expect(stranger.status).toBe(401);

    const right = await get(`${base}/metrics`, { auth: `prometheus:${PASSWORD}` });
    expect(right.status).toBe(200);
    expect(right.text).toContain("pgcp_build_info");
    expect(right.headers["x-frame-options"]).toBe("deny");
  });

  it("protects the status page and, by default, the health endpoints", async () => {
    for (const page of ["/", "/healthz", "/readyz"]) {
      expect((await get(`${base}${page}`)).status, page).toBe(401);
    }
    expect((await get(`${base}/healthz`, { auth: `prometheus:${PASSWORD}` })).status).toBe(200);
    expect((await get(`${base}/`, { auth: `prometheus:${PASSWORD}` })).text).toContain(project);
  });

  it("does not speak plain HTTP on its port", async () => {
    const plain = await fetch(`http://127.0.0.1:${exporter.exporter.server.port}/metrics`).then(
      (r) => r.status,
      () => "refused",
    );
    expect(plain).not.toBe(200);
  });
});

it("answers the health endpoints without a login when healthWithoutAuth is on", async () => {
  const exporter = await exporterWith({
    configFile: await writeWebConfig(dir, TLS_AND_USER()),
    healthWithoutAuth: true,
  });
  try {
    const base = `https://127.0.0.1:${exporter.exporter.server.port}`;
    expect((await get(`${base}/healthz`)).status).toBe(200);
    expect([200, 503]).toContain((await get(`${base}/readyz`)).status);
    expect((await get(`${base}/metrics`)).status).toBe(401);
    expect((await get(`${base}/`)).status).toBe(401);
  } finally {
    await exporter.stop();
  }
});

it("asks for a client certificate signed by the configured CA when told to", async () => {
  const exporter = await exporterWith({
    configFile: await writeWebConfig(
      dir,
      `tls_server_config:
  cert_file: ${TLS("server.crt")}
  key_file: ${TLS("server.key")}
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ${TLS("ca.crt")}
`,
    ),
  });
  try {
    const url = `https://localhost:${exporter.exporter.server.port}/metrics`;
    await expect(get(url)).rejects.toThrow();
    await expect(get(url, { cert: "stranger.crt", key: "stranger.key" })).rejects.toThrow();
    const signed = await get(url, { cert: "client.crt", key: "client.key" });
    expect(signed.status).toBe(200);
    expect(signed.text).toContain("pgcp_build_info");
  } finally {
    await exporter.stop();
  }
});

it("is scraped by a real Prometheus over HTTPS with basic auth, and not with a wrong password", async (ctx) => {
  const binary = requireBinary("prometheus", (note) => ctx.skip(note));
  const exporter = await exporterWith({ configFile: await writeWebConfig(dir, TLS_AND_USER()) });
  const target = `localhost:${exporter.exporter.server.port}`;
  const prometheus = await startPrometheus(binary, {
    job: "pgcp",
    targets: [target],
    caFile: TLS("ca.crt"),
    basicAuth: { username: "prometheus", password: PASSWORD },
    scrapeIntervalSeconds: 1,
    extraJobs: [
      {
        job: "wrong-password",
        targets: [target],
        caFile: TLS("ca.crt"),
        basicAuth: { username: "prometheus", password: "not the password" },
      },
    ],
  });
  try {
    const up = async (job: string) => (await prometheus.query(`up{job="${job}"}`))[0]?.value?.[1];
    await waitFor("Prometheus to scrape both jobs", async () =>
      (await up("pgcp")) !== undefined && (await up("wrong-password")) !== undefined
        ? true
        : undefined,
    );
    expect(await up("pgcp"), prometheus.output()).toBe("1");
    expect(await up("wrong-password")).toBe("0");
    const info = await prometheus.query(`pgcp_build_info{job="pgcp"}`);
    expect(info).toHaveLength(1);
  } finally {
    await prometheus.stop();
    await exporter.stop();
  }
});

describe("a bad web configuration is refused with the setting at fault", () => {
  const checkConfig = async (yaml: string) => {
    const file = await writeWebConfig(dir, yaml);
    return runCli(["check-config", "--projects", project, "--web.config.file", file], {
      PGCP_API_KEY: "k",
    });
  };

  it("a plain password instead of a bcrypt hash, without quoting it", async () => {
    const run = await checkConfig("basic_auth_users:\n  alice: hunter2-plain\n");
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("basic_auth_users.alice: must be a bcrypt hash");
    expect(run.stderr).not.toContain("hunter2-plain");
  });

  it("a key that is not the certificate's", async () => {
    const run = await checkConfig(
      `tls_server_config:\n  cert_file: ${TLS("server.crt")}\n  key_file: ${TLS("stranger.key")}\n`,
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("the key does not match the certificate");
    expect(run.stderr).not.toContain("PRIVATE KEY");
  });

  it("a missing certificate file, a setting it does not implement, an unknown setting", async () => {
    const missing = await checkConfig(
      `tls_server_config:\n  cert_file: ${path.join(dir, "nope.crt")}\n  key_file: ${TLS("server.key")}\n`,
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("tls_server_config.cert_file: cannot read");
    expect(missing.stderr).toContain("ENOENT");

    const unsupported = await checkConfig("rate_limit:\n  interval: 1s\n");
    expect(unsupported.stderr).toContain("rate_limit: is not supported by pgcp-exporter");

    const unknown = await checkConfig("basic_auth_user:\n  alice: x\n");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("basic_auth_user");
  });

  it("run refuses to start on it, before it listens", async () => {
    const file = await writeWebConfig(dir, "basic_auth_users:\n  alice: plain\n");
    const run = await runCli(
      ["run", "--projects", project, "--web.config.file", file, "--listen", "127.0.0.1:0"],
      { PGCP_API_KEY: "k", PGCP_API_URL: sim.apiUrl, PGCP_STATE_DIR: dir },
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("basic_auth_users.alice");
  });

  it("check-config says how the server is reached", async () => {
    const run = await checkConfig(TLS_AND_USER());
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/listen: +:9642 \(https, basic auth for 1 user\)/);
    expect(run.stdout).not.toContain(HASH);
  });
});
