/**
 * The reload plan (pure): a reload takes the live settings from the new configuration and
 * keeps every other setting at its running value, naming each one that changed (never its value).
 */
import { expect, it } from "vitest";
import { planReload, resolveConfig, type RawConfig } from "../../src/config/index.js";

const base: RawConfig = { api: { key: "k1" }, projects: ["p-a"] };
const config = (raw: RawConfig) => resolveConfig("test", [base, raw]);

it("applies projects, sinks, alert rules, stuck thresholds, the log level and web settings", () => {
  const running = config({});
  const next = config({
    projects: ["p-a", "p-b"],
    sinks: [{ name: "hook", kind: "webhook" }],
    alerts: { retrying: true, link: "https://console.example/{project_id}" },
    stuck: { default: 60 },
    log: { level: "debug" },
    web: { healthWithoutAuth: true },
  });
  const plan = planReload(running, next);
  expect(plan.restartNeeded).toEqual([]);
  expect(plan.config).toEqual(next);
});

it("keeps the other settings and names those that changed, a removed one too", () => {
  const running = config({ alerts: { link: "https://console.example/{project_id}" } });
  const next = config({
    api: { key: "k2", url: "https://other.example/api/v2" },
    listen: ":9000",
    poll: { interval: 60 },
    alerts: { outboxLimit: 5 },
    log: { format: "json" },
    metrics: { exclude: ["pgcp_build_info"] },
  });
  const plan = planReload(running, next);
  expect(plan.restartNeeded).toEqual([
    "alerts.outboxLimit",
    "api.key",
    "api.url",
    "listen",
    "log.format",
    "metrics.exclude",
    "poll.interval",
  ]);
  expect(plan.config.api).toEqual(running.api);
  expect(plan.config.poll).toEqual(running.poll);
  expect(plan.config.listen).toBe(running.listen);
  expect(plan.config.alerts.outboxLimit).toBe(running.alerts.outboxLimit);
  // The link is live: removed in the file, removed in the plan.
  expect(plan.config.alerts.link).toBeUndefined();
  expect(JSON.stringify(plan.restartNeeded)).not.toContain("k2");
});

it("an unchanged file changes nothing", () => {
  const running = config({ poll: { interval: 10 }, stuck: { actions: { start_compute: 30 } } });
  const plan = planReload(
    running,
    config({ poll: { interval: 10 }, stuck: { actions: { start_compute: 30 } } }),
  );
  expect(plan).toEqual({ config: running, restartNeeded: [] });
});
