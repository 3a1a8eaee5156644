/**
 * The example configuration (config/pgcp-exporter.example.yaml) as an operator meets it: as
 * written it passes `check-config` with only PGCP_API_KEY set and states exactly the defaults
 * (but for the placeholder project id), and each block after a "# Example:" line is a valid
 * setting once uncommented.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { loadConfig, resolveAccounts, resolveSinks } from "../../src/config/index.js";
import { runCli } from "../support/run-cli.js";
import { tempDir } from "../support/temp-dir.js";

const EXAMPLE = fileURLToPath(new URL("../../config/pgcp-exporter.example.yaml", import.meta.url));

/** The file with every "# Example:" block uncommented (a block: the comment lines after it). */
export function uncommentExamples(text: string): { text: string; blocks: number } {
  const lines = text.split("\n");
  let blocks = 0;
  for (let i = 0; i < lines.length; i++) {
    const marker = /^(\s*)# Example:$/.exec(lines[i] ?? "");
    if (marker === null) continue;
    const indent = marker[1] ?? "";
    blocks += 1;
    lines[i] = "";
    for (let j = i + 1; j < lines.length; j++) {
      const line = lines[j] ?? "";
      if (!line.startsWith(`${indent}# `) && line !== `${indent}#`) break;
      lines[j] = indent + line.slice(indent.length + 2);
    }
  }
  return { text: lines.join("\n"), blocks };
}

it("passes check-config as written with only PGCP_API_KEY set", async () => {
  const run = await runCli(["check-config", "--config", EXAMPLE], { PGCP_API_KEY: "k" });
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  expect(run.stdout).toContain("configuration is valid");
  expect(run.stdout).toMatch(/sinks: +none/);
});

it("states every default, and only defaults but for the project id", async () => {
  const env = { PGCP_API_KEY: "k" };
  const example = await loadConfig({ file: EXAMPLE, env });
  const defaults = await loadConfig({ env: { ...env, PGCP_PROJECTS: "my-project-123456" } });
  expect(example).toEqual(defaults);
  // Every setting is written out, an example at least.
  const written = parse(uncommentExamples(await readFile(EXAMPLE, "utf8")).text) as Record<
    string,
    unknown
  >;
  // `accounts` has no default (the single-key settings make one account): an example shows it.
  expect(Object.keys(written).sort()).toEqual([...Object.keys(defaults), "accounts"].sort());
});

it("has examples that are valid once uncommented", async () => {
  const { text, blocks } = uncommentExamples(await readFile(EXAMPLE, "utf8"));
  expect(blocks).toBeGreaterThanOrEqual(4);
  // The accounts example replaces the single-key projects: the file says to leave them unset.
  const { projects, ...settings } = parse(text) as Record<string, unknown>;
  expect(projects).toEqual(["my-project-123456"]);
  const file = path.join(await tempDir("pgcp-example-"), "uncommented.yaml");
  await writeFile(file, stringify(settings));
  const env = {
    PGCP_API_KEY: "k",
    PGCP_API_KEY_PLATFORM: "key-platform",
    PGCP_API_KEY_DATA: "key-data",
    PGCP_SLACK_WEBHOOK_URL: "https://hooks.slack.example/services/T/B/X",
    PGCP_WEBHOOK_URL: "https://hooks.example/pgcp",
    PGCP_WEBHOOK_SECRET: "s",
    PGCP_PAGERDUTY_ROUTING_KEY: "R0UTINGKEY0123456789abcdefABCDEF",
  };
  const config = await loadConfig({ file, env });
  expect(resolveSinks(config, env).map((s) => s.config.name)).toEqual([
    "slack",
    "oncall-webhook",
    "pagerduty",
    "alertmanager",
  ]);
  expect(
    resolveAccounts(config, env).map((a) => [a.name, a.key, a.requestsPerMinute, a.projects]),
  ).toEqual([
    [
      "platform",
      "key-platform",
      700,
      { ids: [], all: false, orgs: ["org-platform-team-12345678"] },
    ],
    ["data", "key-data", 300, { ids: [], all: true, orgs: [] }],
  ]);
  expect(config.state.url).toMatch(/^postgres:\/\//);
  expect(config.web.configFile).toBe("/etc/pgcp-exporter/web.yml");
  expect(config.alerts.link).toContain("{project_id}");
  expect(config.alerts.statusPageUrl).toMatch(/^https:\/\//);
  expect(config.silences.map((s) => [s.name, s.window.kind])).toEqual([
    ["fleet-migration", "one_off"],
    ["nightly-maintenance", "recurring"],
  ]);
});
