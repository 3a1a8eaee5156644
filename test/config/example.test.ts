import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { loadConfig, resolveSinks } from "../../src/config/index.js";

const EXAMPLE = fileURLToPath(new URL("../../config/pgcp-exporter.example.yaml", import.meta.url));

it("the example configuration is valid and states every default", async () => {
  const env = {
    PGCP_API_KEY: "k",
    PGCP_SLACK_WEBHOOK_URL: "https://hooks.slack.example/services/T/B/X",
    PGCP_WEBHOOK_URL: "https://hooks.example/pgcp",
    PGCP_WEBHOOK_SECRET: "s",
  };
  const example = await loadConfig({ file: EXAMPLE, env });
  expect(resolveSinks(example, env).map((s) => s.config.name)).toEqual(["slack", "oncall-webhook"]);
  // What the example writes out equals the defaults, except where it shows a non-default use.
  const defaults = await loadConfig({ env: { ...env, PGCP_PROJECTS: "my-project-123456" } });
  expect({ ...example, sinks: [], alerts: { ...example.alerts, link: undefined } }).toEqual({
    ...defaults,
    alerts: { ...defaults.alerts, link: undefined },
  });
});
