/**
 * Metrics: the catalogue of every family; API and daemon events counted in prom-client; the
 * families projected from committed state, endpoint listings and runtime probes, written as
 * exposition text of our own (a project's text kept while it is unchanged); and the cached
 * `/metrics` rendering of both, built in slices into the buffers of renderings no longer read.
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
export type { Exposition, ExpositionTiming, LentRendering, Rendering } from "./exposition.js";
export type { AccountProbe, LeaseProbe, SchedulerProbe } from "./projected-family.js";
export { renderReference, type SeriesCounts } from "./reference.js";
export { atLevel } from "./selection.js";
