/**
 * The PrometheusRule manifests of `config/kubernetes/` are what `prometheus-rule.ts` generates
 * from `config/prometheus/alerts.yml`: the test fails, naming the command that rewrites them,
 * as soon as a rule changes in one place only.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  PROMETHEUS_RULE_FILES,
  REGENERATE,
  renderCommitted,
  renderPrometheusRule,
  repositoryPath,
} from "./prometheus-rule.js";
import { ALERTS_FILE } from "./support.js";

describe.each(PROMETHEUS_RULE_FILES.map((f) => [f] as const))("%s", (file) => {
  it("is generated from config/prometheus/alerts.yml", async () => {
    const expected = await renderCommitted(file);
    const path = repositoryPath(file);
    if (process.env.UPDATE_MANIFESTS === "1") writeFileSync(path, expected);
    expect(existsSync(path), `${file} is missing: run ${REGENERATE}`).toBe(true);
    expect(
      readFileSync(path, "utf8"),
      `${file} differs from config/prometheus/alerts.yml: run ${REGENERATE}`,
    ).toBe(expected);
  });
});

describe("the PrometheusRule generator", () => {
  const alerts = readFileSync(ALERTS_FILE, "utf8");

  it("carries alerts.yml's rule groups unchanged", async () => {
    const manifest = parse(await renderPrometheusRule(alerts, PROMETHEUS_RULE_FILES[0]!)) as {
      apiVersion: string;
      kind: string;
      spec: { groups: unknown };
    };
    expect(manifest.apiVersion).toBe("monitoring.coreos.com/v1");
    expect(manifest.kind).toBe("PrometheusRule");
    expect(manifest.spec.groups).toEqual((parse(alerts) as { groups: unknown }).groups);
  });

  it("follows a change of alerts.yml", async () => {
    const changed = alerts.replace("severity: critical", "severity: page");
    expect(changed).not.toBe(alerts);
    const file = PROMETHEUS_RULE_FILES[0]!;
    expect(await renderPrometheusRule(changed, file)).not.toBe(
      await renderPrometheusRule(alerts, file),
    );
  });
});
