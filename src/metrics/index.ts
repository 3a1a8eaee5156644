/**
 * Metrics, in rooms that import only the rooms before them: `definitions/` (every family with its
 * value function, the levels, the selection), `events/` (the families prom-client counts) and
 * `rendering/` (exposition text, the cached `/metrics` body, and the same families as numbers
 * for the OTLP push); `exporter-metrics.ts` joins them, in two phases: the counts (before the
 * daemon, whose parts count into them) and the exposition (once the daemon exists, whose parts
 * it reads).
 */
export { CATALOGUE, type MetricName } from "./definitions/catalogue.js";
export type { MetricGroup, MetricSource, MetricSpec, MetricType } from "./definitions/family.js";
export { DETAIL_LEVELS, atLevel, type DetailLevel } from "./definitions/levels.js";
export type { AccountProbe, LeaseProbe, SchedulerProbe } from "./definitions/projection.js";
export { metricListProblems, type SelectionProblem } from "./definitions/selection.js";
export {
  countMetrics,
  createExporterMetrics,
  exposeMetrics,
  type CountingOptions,
  type ExporterMetrics,
  type ExporterMetricsOptions,
  type ExpositionOptions,
  type MetricCounts,
} from "./exporter-metrics.js";
export type {
  FamilyValues,
  HistogramFamilyValues,
  SampleFamilyValues,
} from "./rendering/family-values.js";
export type {
  Exposition,
  ExpositionTiming,
  LentRendering,
  Rendering,
} from "./rendering/exposition.js";
export { renderReference, type SeriesCounts } from "./reference.js";
