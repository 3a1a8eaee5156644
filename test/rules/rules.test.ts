/**
 * The alerting rules (`config/prometheus/alerts.yml`): promtool accepts them and their unit
 * tests pass (`promtool check rules`, `promtool test rules`, from Debian's `prometheus`
 * package: fails under CI when missing, skipped elsewhere); every metric they name, and every
 * series their tests feed them, is one of the catalogue with labels its family has; every rule
 * is tested both firing and not firing; and the sample Prometheus configuration loads them.
 */
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { requireBinary } from "../e2e/support/binaries.js";
import { catalogueProblems, selectors } from "../dashboards/support/promql.js";
import { runPromtool } from "../dashboards/support/promtool.js";
import {
  ALERTS_FILE as ALERTS,
  ALERTS_TESTS_FILE as ALERTS_TESTS,
  PROMETHEUS_FILE as PROMETHEUS,
  RULES_JOB,
  loadAlertRules,
  loadRules,
} from "./support.js";

interface RuleTests {
  readonly rule_files: string[];
  readonly tests: {
    readonly name: string;
    readonly input_series: { readonly series: string; readonly values: string }[];
    readonly alert_rule_test?: {
      readonly eval_time: string;
      readonly alertname: string;
      readonly exp_alerts: { readonly exp_labels: Record<string, string> }[];
    }[];
  }[];
}

const RULES = loadRules();
const ALERT_RULES = loadAlertRules();
const TESTS = parse(readFileSync(ALERTS_TESTS, "utf8")) as RuleTests;

describe("config/prometheus/alerts.yml", () => {
  it("covers operation failures, stuck operations, the exporter, the API, the notifier and the computes", () => {
    expect(ALERT_RULES.map((r) => r.alert)).toEqual([
      "PgcpOperationsFailing",
      "PgcpOperationFailureRatioHigh",
      "PgcpOperationsStuck",
      "PgcpExporterDown",
      "PgcpConfigReloadFailed",
      "PgcpAccountKeyRefused",
      "PgcpProjectPollFailing",
      "PgcpProjectStale",
      "PgcpProjectBlocked",
      "PgcpProjectsUnowned",
      "PgcpApiErrors",
      "PgcpApiRateLimited",
      "PgcpPollIntervalsStretched",
      "PgcpAlertBacklog",
      "PgcpAlertsDeadLettered",
      "PgcpAlertsDropped",
      "PgcpLargerComputeAdvised",
      "PgcpComputeProbeFailing",
    ]);
    expect(RULES).toHaveLength(ALERT_RULES.length);
  });

  it("passes promtool check rules", (ctx) => {
    const promtool = requireBinary("promtool", (note) => ctx.skip(note));
    const run = runPromtool(promtool, ["check", "rules", ALERTS]);
    expect(run.output).toContain(`SUCCESS: ${RULES.length} rules found`);
    expect(run.status, run.output).toBe(0);
  });

  it("passes its unit tests: promtool test rules config/prometheus/alerts.test.yml", (ctx) => {
    const promtool = requireBinary("promtool", (note) => ctx.skip(note));
    const run = runPromtool(promtool, ["test", "rules", ALERTS_TESTS]);
    expect(run.output).toContain("SUCCESS");
    expect(run.output).not.toContain("FAILED");
    expect(run.status, run.output).toBe(0);
  });

  it.each(ALERT_RULES.map((r) => [r.alert, r] as const))(
    "%s names only catalogue series and their labels",
    (_name, rule) => {
      expect(selectors(rule.expr).length).toBeGreaterThan(0);
      expect(catalogueProblems(rule.expr)).toEqual([]);
    },
  );

  it.each(ALERT_RULES.map((r) => [r.alert, r] as const))(
    "%s has a severity, a summary and a description",
    (_name, rule) => {
      expect(["critical", "warning", "info"]).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary).toBeTruthy();
      expect(rule.annotations?.description).toBeTruthy();
    },
  );
});

describe("config/prometheus/alerts.test.yml", () => {
  it("tests alerts.yml", () => {
    expect(TESTS.rule_files).toEqual(["alerts.yml"]);
  });

  it.each(ALERT_RULES.map((r) => [r.alert] as const))("tests %s firing and not firing", (alert) => {
    const evaluations = TESTS.tests.flatMap((t) =>
      (t.alert_rule_test ?? []).filter((e) => e.alertname === alert),
    );
    expect(
      evaluations.some((e) => e.exp_alerts.length > 0),
      "a firing case",
    ).toBe(true);
    expect(
      evaluations.some((e) => e.exp_alerts.length === 0),
      "a quiet case",
    ).toBe(true);
  });

  it("feeds the rules series of the catalogue only, with their families' labels", () => {
    const problems = TESTS.tests.flatMap((t) =>
      t.input_series.flatMap((s) => catalogueProblems(s.series).map((p) => `${t.name}: ${p}`)),
    );
    expect(problems).toEqual([]);
  });
});

describe("config/prometheus/prometheus.yml", () => {
  const config = parse(readFileSync(PROMETHEUS, "utf8")) as {
    global: { scrape_interval: string };
    rule_files: string[];
    scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
  };

  it("passes promtool check config, which also checks the rule files it loads", (ctx) => {
    const promtool = requireBinary("promtool", (note) => ctx.skip(note));
    const run = runPromtool(promtool, ["check", "config", PROMETHEUS]);
    expect(run.output).toContain(`SUCCESS: ${RULES.length} rules found`);
    expect(run.status, run.output).toBe(0);
  });

  it("loads alerts.yml and scrapes the exporter on :9642 under the job PgcpExporterDown names", () => {
    expect(config.rule_files).toEqual(["alerts.yml"]);
    expect(config.scrape_configs).toHaveLength(1);
    const [job] = config.scrape_configs;
    expect(job!.static_configs.flatMap((s) => s.targets)).toEqual(["localhost:9642"]);
    expect(job!.job_name).toBe(RULES_JOB);
    const down = ALERT_RULES.find((r) => r.alert === "PgcpExporterDown")!;
    expect(down.expr).toContain(`job="${RULES_JOB}"`);
  });
});
