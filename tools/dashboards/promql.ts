/**
 * The PromQL vocabulary of the dashboards: series names typed against the metric catalogue, so
 * that a dashboard naming a metric the exporter does not serve fails to compile, and selectors
 * that apply the dashboards' `$project` variable to every family that has a `project` label.
 */
import { CATALOGUE, type MetricName } from "../../src/metrics/definitions/catalogue.js";

type Entry = (typeof CATALOGUE)[number];
export type HistogramName = Extract<Entry, { type: "histogram" }>["name"];

/** The suffixes of the series a histogram family exposes. */
export const HISTOGRAM_SUFFIXES = ["_bucket", "_sum", "_count"] as const;

/**
 * A series name the exporter serves: a counter or gauge family's name, or a histogram family's
 * name with `_bucket`, `_sum` or `_count`.
 */
export type SeriesName =
  Exclude<MetricName, HistogramName> | `${HistogramName}${(typeof HISTOGRAM_SUFFIXES)[number]}`;

/** The dashboards' project variable, as a label matcher (a regex: `All` is `.*`). */
export const PROJECT_MATCHER = 'project=~"$project"';

/** The catalogue family a series belongs to. */
export function familyOf(series: SeriesName): Entry {
  for (const entry of CATALOGUE) {
    if (entry.name === series) return entry;
    if (entry.type === "histogram" && HISTOGRAM_SUFFIXES.some((s) => entry.name + s === series)) {
      return entry;
    }
  }
  // Unreachable for a well-typed argument; kept for callers that cast.
  throw new Error(`${series} is no series of the metric catalogue`);
}

/**
 * A selector of `series` with `matchers` (e.g. `status=~"failed|error"`), which starts with the
 * project matcher when the family has a `project` label: every panel follows `$project`.
 */
export function sel(series: SeriesName, ...matchers: string[]): string {
  const family = familyOf(series);
  const labels: readonly string[] = family.labels;
  const all = labels.includes("project") ? [PROJECT_MATCHER, ...matchers] : matchers;
  return all.length === 0 ? series : `${series}{${all.join(",")}}`;
}

/** `histogram_quantile(q, sum by (le, ...by) (rate(<family>_bucket{...}[$__rate_interval])))` */
export function quantile(
  q: number,
  family: HistogramName,
  by: readonly string[],
  ...matchers: string[]
): string {
  const bucket = sel(`${family}_bucket`, ...matchers);
  return `histogram_quantile(${q}, sum by (${["le", ...by].join(", ")}) (${rate(bucket)}))`;
}

/** The per-second rate of a counter's `selector` over Grafana's rate interval. */
export function rate(selector: string): string {
  return `rate(${selector}[$__rate_interval])`;
}

/** How much a counter's `selector` grew in each of the graph's intervals (one bar each). */
export function perInterval(selector: string): string {
  return `increase(${selector}[$__interval])`;
}
