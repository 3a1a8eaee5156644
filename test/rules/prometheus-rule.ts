/**
 * The Prometheus Operator's `PrometheusRule` manifests in `config/kubernetes/` (one per overlay,
 * so that each folder builds on its own with any kustomize) are generated from
 * `config/prometheus/alerts.yml`, never edited by hand. `prometheus-rule.test.ts` fails while a
 * manifest differs from what this renders; `REGENERATE` rewrites them.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { format, resolveConfig } from "prettier";
import { Document, parse } from "yaml";
import { ALERTS_FILE } from "./support.js";

/** The command that rewrites the manifests from alerts.yml. */
export const REGENERATE = "UPDATE_MANIFESTS=1 npx vitest run test/rules/prometheus-rule.test.ts";

/** The generated manifests, relative to the repository's root. */
export const PROMETHEUS_RULE_FILES: readonly string[] = [
  "config/kubernetes/prometheusrule.yaml",
  "config/kubernetes/replicas/prometheusrule.yaml",
];

/** The absolute path of a file named relative to the repository's root. */
export function repositoryPath(file: string): string {
  return fileURLToPath(new URL(`../../${file}`, import.meta.url));
}

const HEADER = [
  " Generated from config/prometheus/alerts.yml: do not edit by hand. After a change there,",
  `   ${REGENERATE}`,
  " rewrites this file (the test fails while the two differ).",
  "",
  " The alert rules for the Prometheus Operator. kube-prometheus-stack's Prometheus loads only",
  " the PrometheusRules labelled `release: <its Helm release name>`, unless it is installed with",
  " prometheus.prometheusSpec.ruleSelectorNilUsesHelmValues=false: add that label with a",
  " kustomization of your own (docs/operations.md, section Kubernetes).",
].join("\n");

/**
 * The PrometheusRule manifest for alerts.yml's text, formatted as prettier formats `file`. The
 * file's `groups:` (its only top-level key) is indented under `spec:` line by line, so the rules
 * read as they do in alerts.yml, comments and line breaks included; the result is then parsed
 * back and must hold the same groups.
 */
export async function renderPrometheusRule(alertsYaml: string, file: string): Promise<string> {
  const { groups, ...others } = (parse(alertsYaml) ?? {}) as Record<string, unknown>;
  if (groups === undefined || Object.keys(others).length > 0) {
    throw new Error("alerts.yml must hold `groups:` and nothing else");
  }
  const lines = alertsYaml.split("\n");
  const start = lines.findIndex((line) => /^groups:/.test(line));
  const header = new Document({
    apiVersion: "monitoring.coreos.com/v1",
    kind: "PrometheusRule",
    metadata: { name: "pgcp-exporter", labels: { "app.kubernetes.io/name": "pgcp-exporter" } },
    spec: null,
  });
  header.commentBefore = HEADER;
  const spec = lines.slice(start).map((line) => (line === "" ? "" : `  ${line}`));
  const text = header.toString().replace(/^spec: null$/m, ["spec:", ...spec].join("\n"));
  const manifest = parse(text) as { spec?: { groups?: unknown } };
  if (!isDeepStrictEqual(manifest.spec?.groups, groups)) {
    throw new Error("the PrometheusRule's groups differ from alerts.yml's");
  }
  const path = repositoryPath(file);
  return format(text, { ...(await resolveConfig(path)), filepath: path });
}

/** The manifest for the committed alerts.yml. */
export function renderCommitted(file: string): Promise<string> {
  return renderPrometheusRule(readFileSync(ALERTS_FILE, "utf8"), file);
}
