/** The alerting rules and their unit tests, read from `config/prometheus/`. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

export const RULES_DIR = fileURLToPath(new URL("../../config/prometheus/", import.meta.url));
export const ALERTS_FILE = `${RULES_DIR}alerts.yml`;
export const ALERTS_TESTS_FILE = `${RULES_DIR}alerts.test.yml`;
export const PROMETHEUS_FILE = `${RULES_DIR}prometheus.yml`;

/** The job name the rules expect the exporter to be scraped under. */
export const RULES_JOB = "pgcp-exporter";

export interface Rule {
  readonly alert?: string;
  readonly record?: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}

export type AlertRule = Rule & { readonly alert: string };

/** Every rule of alerts.yml, in file order. */
export function loadRules(): Rule[] {
  const { groups } = parse(readFileSync(ALERTS_FILE, "utf8")) as { groups: { rules: Rule[] }[] };
  return groups.flatMap((g) => g.rules);
}

/** The alerting rules of alerts.yml, in file order. */
export function loadAlertRules(): AlertRule[] {
  return loadRules().filter((r): r is AlertRule => r.alert !== undefined);
}
