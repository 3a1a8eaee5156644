/**
 * prom-client's default process and Node.js families, in a registry of their own, less those
 * that would fail `promtool check metrics` or the label rules (each left out with its reason).
 */
import { Registry, collectDefaultMetrics } from "prom-client";

/**
 * prom-client's default process metrics that are left out, and why: the `_total` ones are
 * gauges, which `promtool check metrics` rejects; the others carry a label named `type`.
 * Between them they only count open handles, requests and resources.
 */
export const OMITTED_PROCESS_METRICS: readonly { readonly name: string; readonly why: string }[] = [
  { name: "nodejs_active_handles_total", why: "a gauge whose name ends in `_total`" },
  { name: "nodejs_active_requests_total", why: "a gauge whose name ends in `_total`" },
  { name: "nodejs_active_resources_total", why: "a gauge whose name ends in `_total`" },
  { name: "nodejs_active_handles", why: "a label named `type`" },
  { name: "nodejs_active_requests", why: "a label named `type`" },
  { name: "nodejs_active_resources", why: "a label named `type`" },
];

export function processMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const { name } of OMITTED_PROCESS_METRICS) registry.removeSingleMetric(name);
  return registry;
}

export function familyNames(registry: Registry): string[] {
  return registry.getMetricsAsArray().map((family) => family.name);
}
