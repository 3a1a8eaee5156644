/**
 * Metrics, in rooms that import only the rooms before them: `definitions/` (every family with its
 * value function, the levels, the selection), `events/` (the families prom-client counts) and
 * `rendering/` (exposition text, the cached `/metrics` body); `exporter-metrics.ts` joins them.
 */
export { CATALOGUE, type MetricName } from "./definitions/catalogue.js";
export type { MetricGroup, MetricSource, MetricSpec, MetricType } from "./definitions/family.js";
export { DETAIL_LEVELS, atLevel, type DetailLevel } from "./definitions/levels.js";
export type { AccountProbe, LeaseProbe, SchedulerProbe } from "./definitions/projection.js";
export { metricListProblems, type SelectionProblem } from "./definitions/selection.js";
export {
  createExporterMetrics,
  type ExporterMetrics,
  type ExporterMetricsOptions,
} from "./exporter-metrics.js";
export type {
  Exposition,
  ExpositionTiming,
  LentRendering,
  Rendering,
} from "./rendering/exposition.js";
export { renderReference, type SeriesCounts } from "./reference.js";
