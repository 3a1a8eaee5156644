/**
 * Metrics: the catalogue of every family; API and daemon events counted in prom-client; the
 * families projected from committed state, endpoint listings and runtime probes, written as
 * exposition text of our own; and the cached `/metrics` rendering of both, in slices.
 */
export {
  CATALOGUE,
  DETAIL_LEVELS,
  type DetailLevel,
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
export type { Exposition, ExpositionTiming, Rendering } from "./exposition.js";
export type { AccountProbe, LeaseProbe, SchedulerProbe } from "./projected-family.js";
export { renderReference, type SeriesCounts } from "./reference.js";
export { atLevel } from "./selection.js";
