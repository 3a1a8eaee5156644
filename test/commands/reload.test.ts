/**
 * SIGHUP reloads the configuration of the real daemon (`node dist/cli.js run --config FILE`)
 * without a restart: projects, sinks and routing, the log level and the web configuration
 * apply at once, other changed settings are named in the log and keep their running values, and
 * a file that is not valid is refused while the running configuration goes on working.
 * `pgcp_config_last_reload_successful` says how the last reload went. Alerts go to a local
 * receiver (the generic webhook's documented contract), against the simulator over HTTP.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import bcrypt from "bcryptjs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { stringify } from "yaml";
import { createProject, failsAfter, startSim, type SimProject } from "../alerts/e2e/support.js";
import { parseExposition } from "../daemon/support.js";
import { daemonConfigYaml, type DaemonConfig } from "../support/daemon-config.js";
import { DaemonGroup, type DaemonProcess } from "../support/daemon-process.js";
import { startReceiver, type Receiver } from "../support/receiver.js";
import type { TestSimulator } from "../support/simulator.js";
import { removeDir, tempDir } from "../support/temp-dir.js";
import { waitForWith } from "../support/wait.js";

const waitFor = waitForWith({ timeoutMs: 20_000, intervalMs: 50 });

let sim: TestSimulator;
let hook: Receiver;
let first: SimProject;
let second: SimProject;
let dir: string;
const daemons = new DaemonGroup();

beforeAll(async () => {
  sim = await startSim();
  hook = await startReceiver();
  first = await createProject(sim);
  second = await createProject(sim);
  dir = await tempDir("pgcp-reload-");
});
afterAll(async () => {
  await daemons.killAll();
  await hook.close();
  await sim.close();
  await removeDir(dir);
});

/** The daemon's configuration file, as written before each SIGHUP. */
function settings(extra: Partial<DaemonConfig>): string {
  return daemonConfigYaml({
    api: { url: sim.apiUrl, maxAttempts: 1 },
    state: { dir: path.join(dir, "state") },
    poll: { interval: 1, fastInterval: 1, endpointsInterval: 0, jitter: 0 },
    log: { level: "info", format: "json" },
    ...extra,
  });
}

async function metric(daemon: DaemonProcess, name: string, labels: Record<string, string> = {}) {
  const response = await fetch(`${await daemon.url}/metrics`);
  const samples = parseExposition(await response.text());
  return samples.find(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  )?.value;
}

/** An operation of `project` that runs, then fails a simulated second later. */
function fails(project: SimProject, error: string) {
  return sim.sim.scriptOperation({
    project_id: project.projectId,
    branch_id: project.branchId,
    action: "apply_config",
    steps: failsAfter(1, "failed", error),
  });
}

/** Sends SIGHUP and waits for the reload's outcome line (the nth of its kind). */
async function hangUp(daemon: DaemonProcess, outcome: "reloaded" | "failed") {
  const message =
    outcome === "reloaded"
      ? "configuration reloaded"
      : "configuration reload failed; the running configuration is kept";
  const before = daemon.logs.filter((l) => l.msg === message).length;
  daemon.child.kill("SIGHUP");
  await waitFor(`the reload to be ${outcome}`, () =>
    daemon.logs.filter((l) => l.msg === message).length > before ? true : undefined,
  );
  return daemon.logs.filter((l) => l.msg === message).at(-1)!;
}

it("applies projects, sinks, routing and the log level on SIGHUP, and keeps running on a bad file", async () => {
  const file = path.join(dir, "config.yaml");
  await writeFile(file, settings({ projects: [first.projectId] }));
  const daemon = daemons.spawn(file, {
    env: { PGCP_API_KEY: sim.apiKey, RELOAD_HOOK_URL: `${hook.url}/hook` },
  });
  await Promise.race([
    daemon.started,
    daemon.exited.then(() => Promise.reject(new Error(daemon.tail()))),
  ]);
  // Operations that ended before the first poll are history, not counted: wait for it.
  await waitFor("the first poll", async () =>
    (await fetch(`${await daemon.url}/readyz`)).status === 200 ? true : undefined,
  );
  expect(await metric(daemon, "pgcp_config_last_reload_successful")).toBe(1);
  const startedAt = await metric(daemon, "pgcp_config_last_reload_success_timestamp_seconds");
  expect(startedAt).toBeGreaterThan(0);

  // A failure before any sink exists raises no alert (nothing is kept without a sink).
  const early = await fails(first, "before the sink");
  await sim.sim.advance(2);
  await waitFor("the early failure to be counted", async () =>
    (await metric(daemon, "pgcp_operations_total", {
      project: first.projectId,
      status: "failed",
    })) === 1
      ? true
      : undefined,
  );

  // --- a good reload: a second project, a webhook sink for the second project only, debug ----
  await writeFile(
    file,
    settings({
      projects: [first.projectId, second.projectId],
      sinks: [
        {
          name: "hook",
          kind: "webhook",
          urlEnv: "RELOAD_HOOK_URL",
          match: [{ projects: [second.projectId] }],
          groupWindow: 0,
        },
      ],
      log: { level: "debug", format: "json" },
      poll: { interval: 2, fastInterval: 1, endpointsInterval: 0, jitter: 0 },
    }),
  );
  await hangUp(daemon, "reloaded");
  const restart = daemon.logs.find((l) =>
    String(l.msg).includes("take effect only after a restart"),
  );
  expect(restart?.settings).toEqual(["poll.interval"]);
  expect(await metric(daemon, "pgcp_config_last_reload_successful")).toBe(1);
  expect(
    await metric(daemon, "pgcp_config_last_reload_success_timestamp_seconds"),
  ).toBeGreaterThanOrEqual(startedAt!);

  // The second project is watched, and its failure reaches the new sink; the first project's
  // is not routed there.
  await waitFor("the second project to be polled", async () =>
    (await metric(daemon, "pgcp_project_up", { project: second.projectId })) === 1
      ? true
      : undefined,
  );
  const routed = await fails(second, "after the reload");
  const notRouted = await fails(first, "not for this sink");
  await sim.sim.advance(2);
  const delivered = await hook.waitFor(
    (requests) => requests.some((r) => r.text.includes(routed.id)),
    15_000,
  );
  expect(delivered.some((r) => r.text.includes(notRouted.id))).toBe(false);
  expect(delivered.some((r) => r.text.includes(early.id))).toBe(false);
  // The log level is debug now.
  await waitFor("a debug line", () =>
    daemon.logs.some((l) => l.level === "debug") ? true : undefined,
  );

  // --- a bad file: refused, the running configuration goes on ---------------------------------
  await writeFile(file, settings({ projects: [], poll: { interval: -1 } }));
  const failed = await hangUp(daemon, "failed");
  expect(failed.problems).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^projects: /),
      expect.stringMatching(/^poll.interval: /),
    ]),
  );
  expect(await metric(daemon, "pgcp_config_last_reload_successful")).toBe(0);
  const again = await fails(second, "after the bad reload");
  await sim.sim.advance(2);
  await hook.waitFor((requests) => requests.some((r) => r.text.includes(again.id)), 15_000);

  // --- TLS cannot be turned on without a restart: refused whole --------------------------------
  const tls = (name: string) => fileURLToPath(new URL(`../fixtures/tls/${name}`, import.meta.url));
  const web = path.join(dir, "web.yml");
  await writeFile(
    web,
    stringify({
      tls_server_config: { cert_file: tls("server.crt"), key_file: tls("server.key") },
      basic_auth_users: { prometheus: bcrypt.hashSync("pw", 4) },
    }),
  );
  await writeFile(file, settings({ projects: [second.projectId], web: { configFile: web } }));
  const refused = await hangUp(daemon, "failed");
  expect(refused.problems).toEqual(["turning TLS on or off needs a restart"]);
  expect((await fetch(`${await daemon.url}/metrics`)).status).toBe(200);
  expect(daemon.logs.some((l) => l.level === "info" && l.msg === "configuration reloaded")).toBe(
    true,
  );

  // --- basic auth alone can be turned on, and a good file makes the gauge 1 again -------------
  await writeFile(web, stringify({ basic_auth_users: { prometheus: bcrypt.hashSync("pw", 4) } }));
  await hangUp(daemon, "reloaded");
  const url = await daemon.url;
  expect((await fetch(`${url}/metrics`)).status).toBe(401);
  const authorization = `Basic ${Buffer.from("prometheus:pw").toString("base64")}`;
  const scrape = await fetch(`${url}/metrics`, { headers: { authorization } });
  expect(scrape.status).toBe(200);
  expect(await scrape.text()).toContain("pgcp_config_last_reload_successful 1");
  // The first project was dropped from the list: no longer watched.
  await waitFor("the first project to be dropped", async () => {
    const text = await (await fetch(`${url}/metrics`, { headers: { authorization } })).text();
    const up = parseExposition(text).filter((s) => s.name === "pgcp_project_up");
    return up.length === 1 && up[0]?.labels.project === second.projectId ? true : undefined;
  });

  expect((await daemon.stop("SIGTERM")).code).toBe(0);
});
