/**
 * The metric catalogue: every family the exporter exposes, by section, in the order `/metrics`
 * serves them. The registry, the metrics reference (`docs/metrics.md`) and the naming tests
 * are all derived from it, so a family exists in all three or in none.
 */
import { ALERT_FAMILIES } from "./alerts.js";
import { API_FAMILIES } from "./api.js";
import { COMPUTE_FAMILIES } from "./computes.js";
import { ENDPOINT_FAMILIES } from "./endpoints.js";
import { EXPORTER_FAMILIES } from "./exporter.js";
import type { Family } from "./family.js";
import { LEASE_FAMILIES } from "./leases.js";
import { OPERATION_FAMILIES } from "./operations.js";
import { OTLP_FAMILIES } from "./otlp.js";
import { PROJECT_FAMILIES } from "./projects.js";

export const CATALOGUE = [
  ...OPERATION_FAMILIES,
  ...ENDPOINT_FAMILIES,
  ...COMPUTE_FAMILIES,
  ...PROJECT_FAMILIES,
  ...EXPORTER_FAMILIES,
  ...LEASE_FAMILIES,
  ...API_FAMILIES,
  ...ALERT_FAMILIES,
  ...OTLP_FAMILIES,
] as const satisfies readonly Family[];

type Entry = (typeof CATALOGUE)[number];

export type MetricName = Entry["name"];

/** The families counted from events as they happen, by type. */
export type EventCounterName = Extract<Entry, { source: "events"; type: "counter" }>["name"];
export type EventHistogramName = Extract<Entry, { source: "events"; type: "histogram" }>["name"];
