/**
 * Metrics: the catalogue of every family, the projection of committed state, endpoint listings
 * and API events onto prom-client, and the cached `/metrics` rendering.
 */
export {
  CATALOGUE,
  type MetricGroup,
  type MetricName,
  type MetricSource,
  type MetricSpec,
  type MetricType,
} from "./catalogue.js";
export {
  createExporterMetrics,
  type ExporterMetrics,
  type ExporterMetricsOptions,
} from "./exporter-metrics.js";
export type { Exposition, ExpositionTiming } from "./exposition.js";
export type { LeaseProbe, SchedulerProbe } from "./projection.js";
export { renderReference } from "./reference.js";
