/**
 * Secrets never appear in logs, metrics or error messages. The secrets (the API key, the Slack
 * webhook URL's token, the webhook URL's path and query, its signing secret, a custom header's
 * value) are distinctive strings; every captured output is grepped for them, case-insensitively:
 *
 * - the in-process exporter's logs (at debug level), its HTTP answers (`/metrics`, `/healthz`,
 *   `/readyz`, the status page) and its committed state, after deliveries that failed in every way a
 *   receiver can fail (500, a dropped connection, a timeout, 429, a redirect, 400), each
 *   answer echoing the request's path (with its secrets) in its headers and body, and after
 *   deliveries that succeeded;
 * - the errors thrown for secrets that are set wrong (not a URL, another scheme, credentials in
 *   the URL), their messages and their full inspection (stack included);
 * - the CLI's stdout and stderr when it refuses such a configuration.
 */
import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { inspect } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { startExporter } from "../../../src/exporter/index.js";
import { resolveConfig, resolveSinks } from "../../../src/config/index.js";
import { captureLogger } from "../../support/capture-logger.js";
import { writeDaemonConfig } from "../../support/daemon-config.js";
import { spawnDaemon } from "../../support/daemon-process.js";
import type { ReceivedRequest, ResponseSpec } from "../../support/receiver.js";
import type { TestSimulator } from "../../support/simulator.js";
import { removeDir, tempDir } from "../../support/temp-dir.js";
import { alertExporterSuite } from "./alert-suite.js";
import {
  exporterSettings,
  scriptFailure,
  SECRETS,
  secretsIn,
  waitFor,
  waitForCommits,
  type AlertExporter,
  type ScriptedReceiver,
  type SimProject,
} from "./support.js";

/** An answer that echoes the request's path (and so its secrets) back every way it can. */
const echo =
  (status: number, extra: Partial<ResponseSpec> = {}) =>
  (request: ReceivedRequest): ResponseSpec => ({
    status,
    headers: {
      "x-echo": request.path,
      location: `http://127.0.0.1${request.path}`,
      ...("headers" in extra ? extra.headers : {}),
    },
    body: `${request.path} ${request.path.toLowerCase()} invalid_token`,
    ...("delayMs" in extra ? { delayMs: extra.delayMs } : {}),
  });

/**
 * Slack: a dropped connection, a timeout, 500 (with `Retry-After: 0`, which skips the longest
 * backoff), then 400 (permanent); then 200.
 */
const SLACK_SCRIPT: readonly ((r: ReceivedRequest) => ResponseSpec)[] = [
  () => ({ drop: true }),
  echo(503, { delayMs: 1500 }),
  echo(500, { headers: { "retry-after": "0" } }),
  echo(400),
];
/** Webhook: 500, a timeout, 429 with `Retry-After: 1`, then a redirect (permanent); then 200. */
const HOOK_SCRIPT: readonly ((r: ReceivedRequest) => ResponseSpec)[] = [
  echo(500),
  echo(503, { delayMs: 1500 }),
  echo(429, { headers: { "retry-after": "1" } }),
  echo(301),
];

describe("secrets stay secret", () => {
  let sim: TestSimulator;
  let slack: ScriptedReceiver;
  let hook: ScriptedReceiver;
  let exporter: AlertExporter;
  let project: SimProject;
  let stateDir: string;
  const dirs: string[] = [];

  alertExporterSuite(
    {
      scripts: {
        slack: (r, n) => SLACK_SCRIPT[n]?.(r) ?? { status: 200, body: "ok" },
        hook: (r, n) => HOOK_SCRIPT[n]?.(r) ?? { status: 200, body: "ok" },
      },
      layers: () => [
        {
          sinks: [
            { name: "slack", kind: "slack", groupWindow: 0.2, timeout: 0.5 },
            {
              name: "hook",
              kind: "webhook",
              groupWindow: 0.2,
              timeout: 0.5,
              headers: { Authorization: SECRETS.authorization },
            },
          ],
        },
      ],
    },
    (s) => ({ sim, slack, hook, exporter, project, stateDir } = s),
  );
  afterAll(async () => {
    await Promise.all(dirs.map(removeDir));
  });

  it("keeps them out of the logs, /metrics, the probes and the state through failed and good deliveries", async () => {
    const { projectId } = project;
    const fail = () => scriptFailure(sim, project, "boom");

    // The first failure goes through every scripted refusal and ends dead-lettered.
    await fail();
    await sim.sim.advance(2);
    await waitFor(
      "the first alert to be dead-lettered on both sinks",
      () => exporter.state(projectId)?.deadLetters.length === 2,
      20_000,
    );
    // The second is delivered.
    await fail();
    await sim.sim.advance(2);
    await waitFor(
      "a delivery on both sinks",
      () => slack.delivered().length === 1 && hook.delivered().length === 1,
    );
    await waitForCommits(exporter, projectId, 2);

    const lines = exporter.logs.lines();
    // The failures were logged (so the grep below looked at something).
    const retried = lines.filter((l) => l.msg === "alert delivery failed; will retry");
    expect(retried.map((l) => l.reason)).toEqual(
      expect.arrayContaining(["server_error", "rate_limited", "timeout", "network"]),
    );
    const dead = lines.filter((l) => String(l.msg).includes("dead-lettered"));
    expect(dead.map((l) => l.sink).sort()).toEqual(["hook", "slack"]);
    expect(lines.some((l) => l.msg === "alerts delivered")).toBe(true);

    const metrics = await exporter.metrics();
    expect(metrics).toContain(
      'pgcp_alerts_dead_lettered_total{sink="hook",reason="client_error"} 1',
    );
    // The probes, and the status page (which shows the outbox and the dead letters).
    const probes = [
      await exporter.get("/healthz"),
      await exporter.get("/readyz"),
      await exporter.get("/"),
    ];
    expect(probes.map((p) => p.status)).toEqual([200, 200, 200]);
    expect(probes[2]!.text).toContain(projectId);
    const stateFiles = await readdir(stateDir);
    const states = await Promise.all(
      stateFiles.map((f) => readFile(path.join(stateDir, f), "utf8")),
    );
    // The receiver's address is part of the URLs too: it must not show either.
    const address = [new URL(slack.url).host, new URL(hook.url).host];
    expect([
      ...secretsIn("the logs", exporter.logs.text(), address),
      ...secretsIn("/metrics", metrics, address),
      ...probes.flatMap((p) => secretsIn("a probe or the status page", p.text, address)),
      ...states.flatMap((s) => secretsIn("the state", s, address)),
    ]).toEqual([]);
  });

  it("keeps them out of the errors for secrets that are set wrong", async () => {
    const config = resolveConfig("test", [
      exporterSettings(sim, stateDir, [project.projectId]),
      {
        sinks: [
          { name: "slack", kind: "slack" },
          { name: "hook", kind: "webhook", secretEnv: "HOOK_SECRET" },
        ],
      },
    ]);
    const cases: Record<string, string>[] = [
      // Not a URL, another scheme.
      {
        PGCP_SLACK_WEBHOOK_URL: `not a url ${SECRETS.slackPath}`,
        PGCP_WEBHOOK_URL: `ftp://127.0.0.1${SECRETS.hookPath}`,
        HOOK_SECRET: SECRETS.signing,
      },
      // Credentials in the URL; the signing secret's variable unset.
      {
        PGCP_SLACK_WEBHOOK_URL: `https://user:SLACKTOKENSECRET4b2c9d@127.0.0.1/x`,
        PGCP_WEBHOOK_URL: `http://127.0.0.1${SECRETS.hookPath}`,
      },
      // Credentials in the URL, found when the sink is built (startExporter).
      {
        PGCP_SLACK_WEBHOOK_URL: `https://user:SLACKTOKENSECRET4b2c9d@127.0.0.1/x`,
        PGCP_WEBHOOK_URL: `http://HOOKPATHSECRET91d0:HOOKQUERYSECRET5e77@127.0.0.1/`,
        HOOK_SECRET: SECRETS.signing,
      },
    ];
    const found: string[] = [];
    for (const [i, env] of cases.entries()) {
      const logs = captureLogger();
      let error: unknown;
      try {
        resolveSinks(config, env);
        const running = await startExporter(config, { logger: logs.logger, env });
        await running.stop();
      } catch (e) {
        error = e;
      }
      expect(error, `case ${i} was accepted`).toBeInstanceOf(Error);
      const message = (error as Error).message;
      found.push(
        ...secretsIn(`case ${i}'s message`, message),
        ...secretsIn(`case ${i}'s inspection`, inspect(error, { depth: 5 })),
        ...secretsIn(`case ${i}'s logs`, logs.text()),
      );
    }
    expect(found).toEqual([]);
  });

  it("keeps them out of the CLI's output when it refuses them", async () => {
    const configDir = await tempDir("pgcp-alerts-e2e-");
    dirs.push(configDir);
    const configFile = path.join(configDir, "config.yaml");
    await writeConfig(configFile, sim, stateDir, project.projectId);
    const attempts: Record<string, string>[] = [
      {
        PGCP_API_KEY: SECRETS.apiKey,
        PGCP_SLACK_WEBHOOK_URL: `ftp://127.0.0.1${SECRETS.slackPath}`,
        PGCP_WEBHOOK_URL: `http://127.0.0.1${SECRETS.hookPath}`,
        PGCP_WEBHOOK_SECRET: SECRETS.signing,
      },
      {
        PGCP_API_KEY: SECRETS.apiKey,
        PGCP_SLACK_WEBHOOK_URL: `https://u:SLACKTOKENSECRET4b2c9d@127.0.0.1/x`,
        PGCP_WEBHOOK_URL: `http://127.0.0.1${SECRETS.hookPath}`,
        PGCP_WEBHOOK_SECRET: SECRETS.signing,
      },
    ];
    const found: string[] = [];
    for (const [i, env] of attempts.entries()) {
      const cli = spawnDaemon(configFile, { env });
      const exit = await cli.exited;
      expect(exit.code, `attempt ${i} did not fail:\n${cli.text()}`).not.toBe(0);
      expect(cli.text()).toMatch(/PGCP_SLACK_WEBHOOK_URL|webhookUrl/);
      found.push(...secretsIn(`attempt ${i}'s output`, cli.text()));
    }
    expect(found).toEqual([]);
  });
});

async function writeConfig(
  file: string,
  sim: TestSimulator,
  stateDir: string,
  projectId: string,
): Promise<void> {
  await writeDaemonConfig(file, {
    api: { url: sim.apiUrl },
    projects: [projectId],
    state: { dir: stateDir },
    sinks: [
      { name: "slack", kind: "slack" },
      { name: "hook", kind: "webhook", headers: { Authorization: SECRETS.authorization } },
    ],
    // The daemon's own default level.
    log: { level: "info" },
  });
}
