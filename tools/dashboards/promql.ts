/**
 * The PromQL vocabulary of the dashboards: series names typed against the metric catalogue, so
 * that a dashboard naming a metric the exporter does not serve fails to compile; selectors that
 * apply the dashboards' `$project` variable to every family that has a `project` label (and
 * `$account` to the families of an account); and the join that puts each project's name beside
 * its id.
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

/**
 * The dashboards' project variable, as a label matcher (a regex: `All` is every project the
 * variable lists, which follows the account, organisation and region variables).
 */
export const PROJECT_MATCHER = 'project=~"$project"';

/**
 * The dashboards' account variable, as a label matcher (`All` is `.*`): for the families of an
 * account that have no project label (the scheduler's, the rate limiter's). A family with a
 * project label follows `$project`, which follows `$account`.
 */
export const ACCOUNT_MATCHER = 'account=~"$account"';

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
 * project matcher when the family has a `project` label (every panel follows `$project`), else
 * with the account matcher when it has an `account` label.
 */
export function sel(series: SeriesName, ...matchers: string[]): string {
  const family = familyOf(series);
  const labels: readonly string[] = family.labels;
  const all = labels.includes("project")
    ? [PROJECT_MATCHER, ...matchers]
    : labels.includes("account")
      ? [ACCOUNT_MATCHER, ...matchers]
      : matchers;
  return all.length === 0 ? series : `${series}{${all.join(",")}}`;
}

/**
 * `expr`, whose series each have a `project` label, with the project's name as the label `name`
 * (kube-state-metrics style: a join on `pgcp_project_info`, whose value is 1). A project with no
 * info series (not read yet: right after a start, or one the API does not know or refuses) keeps
 * its series, named by its id.
 */
export function withProjectName(expr: string): string {
  const info = sel("pgcp_project_info");
  const named = `(${expr}) * on (project) group_left (name) max by (project, name) (${info})`;
  const unnamed = `label_replace((${expr}) unless on (project) ${info}, "name", "$1", "project", "(.+)")`;
  return `${named} or ${unnamed}`;
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
