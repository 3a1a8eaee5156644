/**
 * The pagerduty sink's configuration: its defaults, the settings only it has and those it has
 * not (refused by name), its routing key from the environment (or a file) and never from the
 * configuration file, the environment's shortcut, and `alerts.statusPageUrl`.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  ConfigError,
  loadConfig,
  PAGERDUTY_EVENTS_URL,
  readSecretFiles,
  resolveConfig,
  resolveSinks,
  SECRET_VARIABLES,
  sinkSecrets,
  sinkVariables,
  type RawConfig,
} from "../../src/config/index.js";
import { runCli } from "../support/run-cli.js";
import { tempDir } from "../support/temp-dir.js";

const KEY = "PDKEYSECRET-0123456789abcdefABCD";
const base: RawConfig = { api: { key: "k" }, projects: "all" };

function problems(layer: RawConfig): string[] {
  try {
    resolveConfig("test", [base, layer]);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  return [];
}

describe("a pagerduty sink", () => {
  it("has PagerDuty's URL, the documented severities and the common defaults", () => {
    const config = resolveConfig("test", [
      base,
      { sinks: [{ name: "oncall", kind: "pagerduty" }] },
    ]);
    expect(config.sinks[0]).toEqual({
      name: "oncall",
      kind: "pagerduty",
      url: PAGERDUTY_EVENTS_URL,
      severity: {
        operation_failed: "critical",
        operation_stuck: "warning",
        operation_retrying: "info",
        compute_advice: "info",
        platform_incident: "critical",
      },
      drop: [],
      match: [],
      groupWindow: 5,
      maxAge: 86_400,
      timeout: 10,
      holdIncidentAlerts: true,
    });
  });

  it("takes an EU URL, severities per kind and the routing keys every sink has", () => {
    const config = resolveConfig("test", [
      base,
      {
        sinks: [
          {
            name: "eu",
            kind: "pagerduty",
            url: "https://events.eu.pagerduty.com/v2/enqueue",
            routingKeyEnv: "PD_EU_KEY",
            severity: { operation_stuck: "error" },
            match: [{ kinds: ["operation_failed", "operation_recovered"] }],
            timeout: "5s",
            maxAge: "1h",
          },
        ],
      },
    ]);
    expect(config.sinks[0]).toMatchObject({
      url: "https://events.eu.pagerduty.com/v2/enqueue",
      routingKeyEnv: "PD_EU_KEY",
      severity: {
        operation_failed: "critical",
        operation_stuck: "error",
        operation_retrying: "info",
      },
      timeout: 5,
      maxAge: 3600,
    });
    expect(sinkVariables(config)).toEqual(["PD_EU_KEY"]);
  });

  it("refuses settings of other kinds, naming whose they are", () => {
    expect(
      problems({
        sinks: [
          {
            name: "p",
            kind: "pagerduty",
            secretEnv: "S",
            headers: { "X-A": "b" },
          },
          { name: "s", kind: "slack", routingKeyEnv: "K" },
          { name: "w", kind: "webhook", routingKeyEnv: "K" },
          { name: "x", kind: "opsgenie" },
        ],
      }),
    ).toEqual([
      "sinks[0].secretEnv: is a setting of webhook sinks only, not of pagerduty sinks",
      "sinks[0].headers: is a setting of webhook sinks only, not of pagerduty sinks",
      "sinks[1].routingKeyEnv: is a setting of pagerduty sinks only, not of slack sinks",
      "sinks[2].routingKeyEnv: is a setting of pagerduty sinks only, not of webhook sinks",
      "sinks[3].kind: must be one of slack, webhook, pagerduty, alertmanager",
    ]);
    expect(
      problems({
        sinks: [
          {
            name: "p",
            kind: "pagerduty",
            severity: { operation_failed: "high", operation_recovered: "info" },
            url: "events.pagerduty.com/v2/enqueue",
          },
        ],
      }),
    ).toEqual([
      'sinks[0].url: must be an http(s) URL, for example "https://events.pagerduty.com/v2/enqueue"',
      "sinks[0].severity.operation_failed: must be one of critical, error, warning, info",
      "sinks[0].severity.operation_recovered: unknown setting (sinks[0].severity takes operation_failed, operation_stuck, operation_retrying, compute_advice, platform_incident)",
    ]);
  });

  it("refuses credentials in its URL", () => {
    expect(
      problems({
        sinks: [
          { name: "p", kind: "pagerduty", url: "https://u:pw@events.pagerduty.com/v2/enqueue" },
        ],
      }),
    ).toEqual(["sinks[0].url: must not carry credentials"]);
  });

  it("reads its URL from the file, but never its routing key", async () => {
    const dir = await tempDir("pgcp-pagerduty-config-");
    const file = path.join(dir, "config.yaml");
    await writeFile(
      file,
      "projects: all\nsinks:\n  - name: p\n    kind: pagerduty\n    url: https://events.eu.pagerduty.com/v2/enqueue\n",
    );
    const config = await loadConfig({ file, env: { PGCP_API_KEY: "k" } });
    expect(config.sinks[0]).toMatchObject({ url: "https://events.eu.pagerduty.com/v2/enqueue" });

    await writeFile(
      file,
      `projects: all\nsinks:\n  - name: p\n    kind: pagerduty\n    routingKey: ${KEY}\n  - name: s\n    kind: slack\n    url: https://hooks.example/T/B/X\n`,
    );
    const refused = await loadConfig({ file, env: { PGCP_API_KEY: "k" } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).problems).toEqual([
      "sinks[0].routingKey: a secret is not read from the file: name an environment variable in routingKeyEnv",
      "sinks[1].url: a secret is not read from the file: name an environment variable in urlEnv",
    ]);
    expect((refused as Error).message).not.toContain(KEY);
  });

  it("carries its routing key from the environment, named in problems but never shown", () => {
    const config = resolveConfig("test", [
      base,
      { sinks: [{ name: "p", kind: "pagerduty", routingKeyEnv: "PD_KEY" }] },
    ]);
    const [sink] = resolveSinks(config, { PD_KEY: KEY });
    expect(sink).toMatchObject({ routingKey: KEY, config: { url: PAGERDUTY_EVENTS_URL } });
    // The status page's list of what never to show holds the key, not PagerDuty's address.
    expect(sinkSecrets(sink!)).toEqual([KEY]);

    for (const env of [{}, { PD_KEY: "" }, { PD_KEY: `${KEY} ${KEY}` }]) {
      let error: unknown;
      try {
        resolveSinks(config, env);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems[0]).toMatch(/^sinks\[0\]\.routingKeyEnv: .*PD_KEY/);
      expect((error as Error).message).not.toContain(KEY);
    }
  });

  it("is made from PGCP_PAGERDUTY_ROUTING_KEY (or its _FILE) when no sink is configured", async () => {
    const config = resolveConfig("test", [base]);
    expect(resolveSinks(config, {})).toEqual([]);
    const dir = await tempDir("pgcp-pagerduty-config-");
    const keyFile = path.join(dir, "routing-key");
    await writeFile(keyFile, `${KEY}\n`);
    expect(SECRET_VARIABLES).toContain("PGCP_PAGERDUTY_ROUTING_KEY");
    const env = readSecretFiles({ PGCP_PAGERDUTY_ROUTING_KEY_FILE: keyFile }, SECRET_VARIABLES);
    const sinks = resolveSinks(config, {
      ...env,
      PGCP_SLACK_WEBHOOK_URL: "https://hooks.example/x",
    });
    expect(sinks.map((s) => [s.config.name, s.config.kind])).toEqual([
      ["slack", "slack"],
      ["pagerduty", "pagerduty"],
    ]);
    expect(sinks[1]).toMatchObject({ routingKey: KEY, config: { url: PAGERDUTY_EVENTS_URL } });
  });

  it("passes check-config with its key in a file, showing neither the key nor the file's text", async () => {
    const dir = await tempDir("pgcp-pagerduty-config-");
    const keyFile = path.join(dir, "routing-key");
    await writeFile(keyFile, `${KEY}\n`);
    const run = await runCli(["check-config", "--projects", "all"], {
      PGCP_API_KEY: "k",
      PGCP_PAGERDUTY_ROUTING_KEY_FILE: keyFile,
    });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/sinks: +pagerduty \(pagerduty\)/);
    expect(run.stdout + run.stderr).not.toContain(KEY);
  });
});

describe("alerts.statusPageUrl", () => {
  it("is optional, and an http(s) URL when given", () => {
    expect(resolveConfig("test", [base]).alerts.statusPageUrl).toBeUndefined();
    expect(
      resolveConfig("test", [base, { alerts: { statusPageUrl: "https://pgcp.example.test/" } }])
        .alerts.statusPageUrl,
    ).toBe("https://pgcp.example.test/");
    expect(problems({ alerts: { statusPageUrl: "ftp://pgcp.example.test/" } })).toEqual([
      'alerts.statusPageUrl: must be an http(s) URL, for example "https://pgcp-exporter.example.com/"',
    ]);
  });
});
