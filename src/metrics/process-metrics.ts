/**
 * prom-client's default process and Node.js metrics, in a registry of their own, without the
 * families that would fail `promtool check metrics` or the label rules (see the catalogue).
 */
import { Registry, collectDefaultMetrics } from "prom-client";
import { OMITTED_PROCESS_METRICS } from "./catalogue.js";

export function processMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const { name } of OMITTED_PROCESS_METRICS) registry.removeSingleMetric(name);
  return registry;
}

export function familyNames(registry: Registry): string[] {
  return registry.getMetricsAsArray().map((family) => family.name);
}
