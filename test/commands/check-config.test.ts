/**
 * `pgcp-exporter check-config`, run as the built command: problems listed by path with exit 2,
 * and with --connect one request per project against the simulator.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import { runCli as cli, type CliRun } from "../support/run-cli.js";
import type { TestSimulator } from "../support/simulator.js";
import { simulatorWithProject } from "../support/simulator-suite.js";
import { tempDir } from "../support/temp-dir.js";

let sim: TestSimulator;
let projectId: string;
simulatorWithProject((s) => ({ sim, projectId } = s), { plan: "free" });

/**
 * `check-config --projects <the project>` with `env` (and `args`), checking that nothing it
 * wrote shows any of `hidden`.
 */
async function checkConfigHiding(
  hidden: readonly string[],
  env: Record<string, string>,
  args: readonly string[] = [],
): Promise<CliRun> {
  const run = await cli(["check-config", "--projects", projectId, ...args], env);
  for (const secret of hidden) expect(run.stdout + run.stderr).not.toContain(secret);
  return run;
}

it("lists every problem by its path and exits 2", async () => {
  const dir = await tempDir("pgcp-check-");
  const file = path.join(dir, "config.yaml");
  await writeFile(
    file,
    "projects: [Not_An_Id]\npoll:\n  interval: 0\nsinks:\n  - name: s\n    kind: slack\n",
  );
  const run = await cli(["check-config", "--config", file], {});
  expect(run.code).toBe(2);
  expect(run.stderr).toContain("api.key: is required (set PGCP_API_KEY)");
  expect(run.stderr).toContain("projects[0]: not a project id");
  expect(run.stderr).toContain("poll.interval: must be greater than zero");
  expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
});

it("names the metric families include and exclude do not know, with the other problems", async () => {
  const dir = await tempDir("pgcp-check-");
  const file = path.join(dir, "config.yaml");
  await writeFile(
    file,
    [
      "projects: all",
      "metrics:",
      "  include: [pgcp_operations_total, pgcp_endpoint_state, process_cpu_seconds_total]",
      "  exclude: [pgcp_operation_total, nodejs_heap_size_total_bytes]",
      "",
    ].join("\n"),
  );
  const run = await cli(["check-config", "--config", file], {});
  expect(run.code).toBe(2);
  expect(run.stderr).toContain("api.key: is required (set PGCP_API_KEY)");
  // The process's families are known too: only the misspelt name is unknown.
  expect(run.stderr).toMatch(/metrics\.exclude: names unknown metrics: pgcp_operation_total$/m);
  expect(run.stderr).toContain(
    "metrics.include: names metrics that detail standard does not serve: pgcp_endpoint_state (from full)",
  );
  expect(run.stderr).not.toContain("metrics.include: names unknown");
});

it("names where each wrong value came from, and what a missing one should be", async () => {
  const dir = await tempDir("pgcp-check-");
  const file = path.join(dir, "config.yaml");
  await writeFile(file, "projects: []\nlog:\n  level: loud\n");
  const fromAll = await cli(["check-config", "--config", file, "--listen", ":99999"], {
    PGCP_API_KEY: "k",
    PGCP_POLL_INTERVAL: "0",
  });
  expect(fromAll.code).toBe(2);
  expect(fromAll.stderr).toContain(
    `projects: lists no project id (list at least one, or write all) (from the file ${file})`,
  );
  expect(fromAll.stderr).toContain("log.level:");
  expect(fromAll.stderr).toMatch(/log\.level: .* \(from the file /);
  expect(fromAll.stderr).toContain("listen: the port must be 0..65535 (from --listen)");
  expect(fromAll.stderr).toContain(
    "poll.interval: must be greater than zero (from PGCP_POLL_INTERVAL)",
  );
  const missing = await cli(["check-config"], { PGCP_API_KEY: "k" });
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain(
    "projects: is required: a list of project ids, or all (set PGCP_PROJECTS or --projects)",
  );
  expect(missing.stderr).not.toContain("Invalid input");
});

it("refuses secrets written in the file, saying where they belong", async () => {
  const dir = await tempDir("pgcp-check-");
  const file = path.join(dir, "config.yaml");
  const key = "napi_in_the_file_0123456789";
  await writeFile(
    file,
    `api:\n  key: ${key}\nprojects: all\nsinks:\n  - name: s\n    kind: slack\n    url: https://hooks.example/T/B/X\n`,
  );
  const run = await cli(["check-config", "--config", file], { PGCP_API_KEY: "from-env" });
  expect(run.code).toBe(2);
  expect(run.stderr).toContain(
    "api.key: a secret is not read from the file: set PGCP_API_KEY (or PGCP_API_KEY_FILE)",
  );
  expect(run.stderr).toContain(
    "sinks[0].url: a secret is not read from the file: name an environment variable in urlEnv",
  );
  expect(run.stderr + run.stdout).not.toContain(key);
  expect(run.stderr + run.stdout).not.toContain("hooks.example");
});

it("reads each secret from the file a _FILE variable names, as mounted secrets are", async () => {
  const dir = await tempDir("pgcp-check-");
  const keyFile = path.join(dir, "api-key");
  const hookFile = path.join(dir, "webhook-url");
  // As `kubectl create secret` and Docker write them: a trailing newline.
  await writeFile(keyFile, `${sim.apiKey}\n`);
  await writeFile(hookFile, "http://127.0.0.1:9/hooks/secret-path\n");
  const env = {
    PGCP_API_KEY_FILE: keyFile,
    PGCP_WEBHOOK_URL_FILE: hookFile,
    PGCP_API_URL: sim.apiUrl,
  };
  const run = await cli(["check-config", "--projects", projectId, "--connect"], env);
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  expect(run.stdout).toContain("webhook");
  expect(run.stdout).not.toContain("secret-path");
  expect(run.stdout).not.toContain(sim.apiKey);

  const both = await cli(["check-config", "--projects", projectId], {
    ...env,
    PGCP_API_KEY: "also-set",
  });
  expect(both.code).toBe(2);
  expect(both.stderr).toContain("PGCP_API_KEY: set PGCP_API_KEY or PGCP_API_KEY_FILE, not both");
  const unreadable = await cli(["check-config", "--projects", projectId], {
    PGCP_API_KEY_FILE: path.join(dir, "missing"),
  });
  expect(unreadable.code).toBe(2);
  expect(unreadable.stderr).toContain(
    `PGCP_API_KEY_FILE: cannot read ${path.join(dir, "missing")} (ENOENT)`,
  );
});

it("shows the API address without the credentials or token it may carry", async () => {
  const url = new URL(sim.apiUrl);
  url.username = "robot";
  url.password = "pw-in-url-1234";
  url.search = "?token=tok-in-url-5678";
  const run = await checkConfigHiding(
    ["robot", "pw-in-url-1234", "tok-in-url-5678"],
    { PGCP_API_KEY: sim.apiKey, PGCP_API_URL: url.href },
    ["--connect"],
  );
  expect(run.code).toBe(0);
  expect(run.stdout).toContain(`api:       ${sim.apiUrl}`);
});

it("refuses a listen address whose port cannot exist", async () => {
  const run = await cli(["check-config", "--projects", projectId, "--listen", ":99999"], {
    PGCP_API_KEY: sim.apiKey,
    PGCP_API_URL: sim.apiUrl,
  });
  expect(run.code).toBe(2);
  expect(run.stderr).toContain("listen: the port must be 0..65535");
});

it("names a missing sink secret without showing any secret", async () => {
  const run = await checkConfigHiding(["secret"], {
    PGCP_API_KEY: "secret-key-value",
    PGCP_WEBHOOK_URL: "not a url with-secret-token",
  });
  expect(run.code).toBe(2);
  expect(run.stderr).toContain("sinks[0].urlEnv: PGCP_WEBHOOK_URL does not hold an http(s) URL");
});

it("shows a Postgres state URL without its password", async () => {
  const run = await checkConfigHiding(["pw-secret-42"], {
    PGCP_API_KEY: "k",
    PGCP_STATE_URL: "postgres://pgcp:pw-secret-42@db.internal:5432/pgcp",
  });
  expect(run.code).toBe(0);
  expect(run.stdout).toContain("postgres://db.internal:5432/pgcp (Postgres");
});

it("checks the key and each project with one request when asked to connect", async () => {
  await sim.sim.resetStats();
  const good = await cli(
    ["check-config", "--connect", "--api-url", sim.apiUrl, "--projects", projectId],
    {
      PGCP_API_KEY: sim.apiKey,
    },
  );
  expect(good.stdout).toContain("configuration is valid");
  expect(good.stdout).toContain(`ok      ${projectId}`);
  expect(good.code).toBe(0);
  expect((await sim.sim.stats()).total).toBe(1);

  const bad = await cli(
    [
      "check-config",
      "--connect",
      "--api-url",
      sim.apiUrl,
      "--projects",
      `${projectId},no-such-project`,
    ],
    { PGCP_API_KEY: sim.apiKey },
  );
  expect(bad.code).toBe(1);
  expect(bad.stdout).toContain(`ok      ${projectId}`);
  expect(bad.stdout).toMatch(/FAILED {2}no-such-project: .*404/);
  // The API answers at its root: the project is what it does not know, not the address.
  expect(bad.stdout).not.toContain("base URL");

  const unauthorised = await cli(
    ["check-config", "--connect", "--api-url", sim.apiUrl, "--projects", projectId],
    { PGCP_API_KEY: "wrong-key-123" },
  );
  expect(unauthorised.code).toBe(1);
  expect(unauthorised.stdout).toContain("check PGCP_API_KEY");
  // The API error names its request id; the line says it once.
  expect(unauthorised.stdout.match(/request id/g)).toHaveLength(1);
  expect(unauthorised.stdout + unauthorised.stderr).not.toContain("wrong-key-123");
});

it("names a base URL that answers 404 even at /projects (no /api/v2) as the fault", async () => {
  const root = sim.apiUrl.replace(/\/api\/v2$/, "");
  const run = await cli(["check-config", "--connect", "--api-url", root, "--projects", projectId], {
    PGCP_API_KEY: sim.apiKey,
  });
  expect(run.code).toBe(1);
  expect(run.stdout).toMatch(new RegExp(`FAILED {2}${projectId}: .*404`));
  expect(run.stdout).toContain(
    `FAILED  the API base URL ${root}/ looks wrong: it answers 404 at /projects too ` +
      "(the API's base URL ends in /api/v2, as https://console.neon.tech/api/v2; check api.url or PGCP_API_URL)",
  );
});

it("checks each account's key, organisations and projects when asked to connect", async () => {
  const acme = await sim.sim.createOrganization({ name: "Acme", members: ["sim-owner"] });
  const globex = await sim.sim.createOrganization({ name: "Globex" });
  await sim.sim.createApiKey({ key: "key-globex-0123", org: globex.id });
  const inGlobex = (await sim.sim.createProject({ org_id: globex.id })).project.id;
  const dir = await tempDir("pgcp-check-");
  const file = path.join(dir, "config.yaml");
  await writeFile(
    file,
    [
      `api: { url: "${sim.apiUrl}" }`,
      "accounts:",
      `  - { name: people, keyEnv: KEY_PEOPLE, projects: all, orgs: [${acme.id}, ${globex.id}] }`,
      `  - { name: globex, keyEnv: KEY_GLOBEX, projects: [${inGlobex}] }`,
      "",
    ].join("\n"),
  );
  const run = await cli(["check-config", "--config", file, "--connect"], {
    KEY_PEOPLE: sim.apiKey,
    KEY_GLOBEX: "key-globex-0123",
  });
  expect(run.stdout).toContain("accounts:");
  expect(run.stdout).toContain(
    `people (${sim.apiUrl}): all (discovered); orgs ${acme.id}, ${globex.id} (discovered)`,
  );
  expect(run.stdout).toContain(`globex (${sim.apiUrl}): ${inGlobex}`);
  expect(run.stdout).toContain("ok      people: the API key can list projects (first: ");
  expect(run.stdout).toContain(`ok      people: the API key can list the projects of ${acme.id}`);
  // The personal key's user is no member of Globex: the API answers 404 for it.
  expect(run.stdout).toMatch(
    new RegExp(`FAILED {2}people: the API key can list the projects of ${globex.id}: .*404`),
  );
  expect(run.stdout).toContain(`ok      globex: ${inGlobex}`);
  expect(run.code).toBe(1);
  expect(run.stdout + run.stderr).not.toContain("key-globex-0123");

  const refused = await cli(["check-config", "--config", file, "--connect"], {
    KEY_PEOPLE: "wrong-key-456",
    KEY_GLOBEX: "key-globex-0123",
  });
  expect(refused.stdout).toContain("(check KEY_PEOPLE)");
  expect(refused.stdout + refused.stderr).not.toContain("wrong-key-456");
});

it("says which variable of the compute probe is not set, and prints as whom it connects, never the password", async () => {
  const dir = await tempDir("pgcp-check-");
  const file = path.join(dir, "config.yaml");
  await writeFile(file, "computes:\n  enabled: true\n  port: 6432\n");
  const missing = await cli(["check-config", "--config", file, "--projects", projectId], {
    PGCP_API_KEY: "k",
    PGCP_COMPUTE_USER: "monitor",
  });
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain(
    "computes.passwordEnv: environment variable PGCP_COMPUTE_PASSWORD is not set",
  );
  const password = "compute-pass-0123";
  const run = await checkConfigHiding(
    [password],
    { PGCP_API_KEY: "k", PGCP_COMPUTE_USER: "monitor", PGCP_COMPUTE_PASSWORD: password },
    ["--config", file],
  );
  expect(run.code).toBe(0);
  expect(run.stdout).toMatch(
    /computes: +as monitor to port 6432, database neondb, sslmode verify-full; every 60 s while others use a compute/,
  );
});

it("says where spans and metrics go over OTLP, naming the headers but never their values", async () => {
  const off = await checkConfigHiding([], { PGCP_API_KEY: "k" });
  expect(off.stdout).toContain("otlp:      off (no endpoint set)");

  const token = "otlp-token-value-91f2";
  const run = await checkConfigHiding([token, "pw-in-collector-url"], {
    PGCP_API_KEY: "k",
    OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector:pw-in-collector-url@otel.example:4318",
    OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${token}`,
    OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://metrics.example:4318/v1/metrics",
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_METRIC_EXPORT_INTERVAL: "15000",
  });
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  expect(run.stdout).toContain(
    "otlp:      traces to https://otel.example:4318/v1/traces (http/json, headers authorization); " +
      "metrics to http://metrics.example:4318/v1/metrics every 15s (http/json, headers authorization)",
  );
});

it("refuses OTLP settings it cannot honour, and headers written in the file", async () => {
  const grpc = await checkConfigHiding([], {
    PGCP_API_KEY: "k",
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel.example:4317",
    OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
  });
  expect(grpc.code).toBe(2);
  expect(grpc.stderr).toContain(
    "otlp.protocol: must be one of http/protobuf, http/json (grpc is not supported: use http/protobuf on port 4318) (from OTEL_EXPORTER_OTLP_PROTOCOL)",
  );
  const headers = await checkConfigHiding(["no-equals-secret"], {
    PGCP_API_KEY: "k",
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel.example:4318",
    OTEL_EXPORTER_OTLP_HEADERS: "no-equals-secret",
  });
  expect(headers.code).toBe(2);
  expect(headers.stderr).toContain(
    "OTEL_EXPORTER_OTLP_HEADERS: must be a comma-separated list of key=value (values percent-encoded)",
  );

  const zipkin = await checkConfigHiding([], {
    PGCP_API_KEY: "k",
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel.example:4318",
    OTEL_TRACES_EXPORTER: "zipkin",
  });
  expect(zipkin.code).toBe(2);
  expect(zipkin.stderr).toContain(
    'OTEL_TRACES_EXPORTER: only otlp and none are exported here (it says "zipkin")',
  );
  const none = await checkConfigHiding([], {
    PGCP_API_KEY: "k",
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel.example:4318",
    OTEL_TRACES_EXPORTER: "none",
  });
  expect(none.code).toBe(0);
  expect(none.stdout).toContain(
    "otlp:      traces off; metrics to http://otel.example:4318/v1/metrics",
  );

  const dir = await tempDir("pgcp-check-");
  const file = path.join(dir, "config.yaml");
  await writeFile(
    file,
    "projects: all\notlp:\n  headers:\n    authorization: Bearer file-token-77\n",
  );
  const inFile = await cli(["check-config", "--config", file], { PGCP_API_KEY: "k" });
  expect(inFile.code).toBe(2);
  expect(inFile.stderr).toContain(
    "otlp.headers: a secret is not read from the file: set OTEL_EXPORTER_OTLP_HEADERS (or OTEL_EXPORTER_OTLP_HEADERS_FILE)",
  );
  expect(inFile.stderr + inFile.stdout).not.toContain("file-token-77");
});
