/**
 * Panel helpers over the Grafana foundation SDK's builders: every panel and query reads from the
 * `$datasource` variable, every query gets a stable refId (A, B, …), and the few visual choices
 * the dashboards share (legends as tables with the last value, stacking, thresholds) and the
 * shapes they repeat (headline stats, graphs from zero, sums by labels, percentiles) are made
 * once here.
 */
import * as common from "@grafana/grafana-foundation-sdk/common";
import type * as cog from "@grafana/grafana-foundation-sdk/cog";
import * as dashboard from "@grafana/grafana-foundation-sdk/dashboard";
import * as prometheus from "@grafana/grafana-foundation-sdk/prometheus";
import * as stat from "@grafana/grafana-foundation-sdk/stat";
import * as statetimeline from "@grafana/grafana-foundation-sdk/statetimeline";
import * as table from "@grafana/grafana-foundation-sdk/table";
import * as timeseries from "@grafana/grafana-foundation-sdk/timeseries";
import { withProjectName } from "./promql.js";

/** Every panel and query reads from the data source the `$datasource` variable selects. */
export const DATASOURCE: dashboard.DataSourceRef = { type: "prometheus", uid: "${datasource}" };

/** One PromQL query of a panel. */
export interface Query {
  readonly expr: string;
  /** Grafana's legend template, e.g. `{{action}} {{status}}`. */
  readonly legend?: string;
}

/** What every panel has. Width in grid columns (24 per row), height in grid rows. */
export interface PanelSpec {
  readonly title: string;
  readonly description: string;
  readonly queries: readonly Query[];
  readonly width: number;
  readonly height: number;
  /** A Grafana unit id (`ops`, `s`, `percentunit`, `short`, …). */
  readonly unit?: string;
  readonly min?: number;
  readonly decimals?: number;
  /** Shortest step Grafana queries at (sets `$__interval`'s floor), e.g. `1m`. */
  readonly interval?: string;
  /** Field settings of the fields (columns, series) with a given display name. */
  readonly overrides?: readonly {
    readonly name: string;
    readonly properties: dashboard.DynamicConfigValue[];
  }[];
}

/**
 * `expr` summed by `labels`: one series per combination of their values, with a legend of those
 * values after `prefix` (`sumBy(["sink"], x, "delivered")`: `delivered {{sink}}`).
 */
export function sumBy(labels: readonly string[], expr: string, prefix?: string): Query {
  const values = labels.map((label) => `{{${label}}}`).join(" ");
  return {
    expr: `sum by (${labels.join(", ")}) (${expr})`,
    legend: prefix === undefined ? values : `${prefix} ${values}`,
  };
}

/**
 * `expr` summed by project and `labels`, with each project's name (`withProjectName`): one series
 * per project and combination, with a legend of the project's name and the labels' values after
 * `prefix` (`sumByProject(["action"], x)`: `{{name}} {{action}}`).
 */
export function sumByProject(labels: readonly string[], expr: string, prefix?: string): Query {
  const summed = sumBy(["project", ...labels], expr).expr;
  const { legend } = sumBy(["name", ...labels], expr, prefix);
  return { expr: withProjectName(summed), ...(legend === undefined ? {} : { legend }) };
}

/**
 * `build(q)` for the quantiles `qs` (p50, p90, p99 unless told), one query each, with the legend
 * `legend("p50")`, `legend("p90")`, ….
 */
export function percentiles(
  build: (q: number) => string,
  legend: (name: string) => string,
  qs: readonly number[] = [0.5, 0.9, 0.99],
): Query[] {
  return qs.map((q) => ({ expr: build(q), legend: legend(`p${Math.round(q * 100)}`) }));
}

/** The builder methods the helpers below call, which every panel builder has. */
interface CommonBuilder<T> {
  title(title: string): T;
  description(description: string): T;
  datasource(datasource: dashboard.DataSourceRef): T;
  span(width: number): T;
  height(height: number): T;
  unit(unit: string): T;
  min(min: number): T;
  decimals(decimals: number): T;
  interval(interval: string): T;
  withTarget(target: cog.Builder<cog.Dataquery>): T;
  overrideByName(name: string, properties: dashboard.DynamicConfigValue[]): T;
}

const REF_IDS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

function target(query: Query, index: number, kind: "range" | "instant" | "table") {
  const builder = new prometheus.DataqueryBuilder()
    .datasource(DATASOURCE)
    .refId(REF_IDS.charAt(index))
    .expr(query.expr)
    .editorMode(prometheus.QueryEditorMode.Code);
  if (query.legend !== undefined) builder.legendFormat(query.legend);
  if (kind === "range") builder.range();
  else builder.instant();
  if (kind === "table") builder.format(prometheus.PromQueryFormat.Table);
  return builder;
}

function apply<T extends CommonBuilder<T>>(
  builder: T,
  spec: PanelSpec,
  kind: "range" | "instant" | "table",
): T {
  if (spec.queries.length > REF_IDS.length) throw new Error(`${spec.title}: too many queries`);
  let b = builder
    .title(spec.title)
    .description(spec.description)
    .datasource(DATASOURCE)
    .span(spec.width)
    .height(spec.height);
  if (spec.unit !== undefined) b = b.unit(spec.unit);
  if (spec.min !== undefined) b = b.min(spec.min);
  if (spec.decimals !== undefined) b = b.decimals(spec.decimals);
  if (spec.interval !== undefined) b = b.interval(spec.interval);
  spec.queries.forEach((query, i) => {
    b = b.withTarget(target(query, i, kind));
  });
  for (const override of spec.overrides ?? [])
    b = b.overrideByName(override.name, override.properties);
  return b;
}

/** Threshold steps: the base color, then `[value, color]` pairs. */
export function thresholds(base: string, ...steps: [number, string][]) {
  return new dashboard.ThresholdsConfigBuilder()
    .mode(dashboard.ThresholdsMode.Absolute)
    .steps([{ value: null, color: base }, ...steps.map(([value, color]) => ({ value, color }))]);
}

export interface TimeseriesSpec extends PanelSpec {
  /** Stack the series (counts that add up, such as rates by status). */
  readonly stack?: boolean;
  /** Draw bars (counts per interval) instead of lines. */
  readonly bars?: boolean;
}

/** A time series panel; the legend is a table with the last and the highest value. */
export function timeseriesPanel(spec: TimeseriesSpec): timeseries.PanelBuilder {
  const builder = apply(new timeseries.PanelBuilder(), spec, "range")
    .legend(
      new common.VizLegendOptionsBuilder()
        .showLegend(true)
        .displayMode(common.LegendDisplayMode.Table)
        .placement(common.LegendPlacement.Bottom)
        .calcs(["lastNotNull", "max"]),
    )
    .tooltip(
      new common.VizTooltipOptionsBuilder()
        .mode(common.TooltipDisplayMode.Multi)
        .sort(common.SortOrder.Descending),
    )
    .fillOpacity(spec.stack === true || spec.bars === true ? 60 : 10)
    .lineWidth(1)
    .showPoints(common.VisibilityMode.Never)
    .spanNulls(false);
  if (spec.stack === true) {
    builder.stacking(new common.StackingConfigBuilder().mode(common.StackingMode.Normal));
  }
  if (spec.bars === true) builder.drawStyle(common.GraphDrawStyle.Bars);
  return builder;
}

/**
 * A graph of counts, rates or durations: it starts at zero, and is 8 grid rows high unless
 * `height` says otherwise.
 */
export function graphPanel(
  spec: Omit<TimeseriesSpec, "min" | "height"> & { readonly height?: number },
): timeseries.PanelBuilder {
  return timeseriesPanel({ min: 0, height: 8, ...spec });
}

export interface StatSpec extends PanelSpec {
  readonly thresholds?: dashboard.ThresholdsConfigBuilder;
  /** What each series shows: its value (default), its name (legend) and value, or its name. */
  readonly text?: "value" | "value_and_name" | "name";
}

const TEXT_MODES = {
  value: common.BigValueTextMode.Value,
  value_and_name: common.BigValueTextMode.ValueAndName,
  name: common.BigValueTextMode.Name,
} as const;

/** A stat panel of instant queries: the last value of each series, colored by thresholds. */
export function statPanel(spec: StatSpec): stat.PanelBuilder {
  return apply(new stat.PanelBuilder(), spec, "instant")
    .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(["lastNotNull"]).values(false))
    .graphMode(common.BigValueGraphMode.None)
    .colorMode(common.BigValueColorMode.Value)
    .textMode(TEXT_MODES[spec.text ?? "value"])
    .thresholds(spec.thresholds ?? thresholds("green"));
}

/** A headline number of the dashboards' top row: a stat panel 4 columns wide and 4 rows high. */
export function headlineStat(spec: Omit<StatSpec, "width" | "height">): stat.PanelBuilder {
  return statPanel({ ...spec, width: 4, height: 4 });
}

/** A headline count of things: a whole number, in the unit `short`. */
export function countStat(
  spec: Omit<StatSpec, "width" | "height" | "unit" | "decimals">,
): stat.PanelBuilder {
  return headlineStat({ ...spec, unit: "short", decimals: 0 });
}

export interface StateTimelineSpec extends PanelSpec {
  readonly mappings: dashboard.ValueMapping[];
}

/** A state timeline: one row per series, colored by value mappings. */
export function stateTimelinePanel(spec: StateTimelineSpec): statetimeline.PanelBuilder {
  return apply(new statetimeline.PanelBuilder(), spec, "range")
    .mappings(spec.mappings)
    .thresholds(thresholds("green"))
    .colorScheme(new dashboard.FieldColorBuilder().mode(dashboard.FieldColorModeId.Thresholds))
    .showValue(common.VisibilityMode.Never)
    .mergeValues(true)
    .rowHeight(0.8)
    .legend(new common.VizLegendOptionsBuilder().showLegend(true));
}

/** Value mappings from values to a text and a color. */
export function valueMappings(
  entries: Record<string, { text: string; color: string }>,
): dashboard.ValueMapping[] {
  const options: Record<string, dashboard.ValueMappingResult> = {};
  Object.entries(entries).forEach(([value, result], index) => {
    options[value] = { ...result, index };
  });
  return [{ type: dashboard.MappingType.ValueToText, options }];
}

export interface TableSpec extends PanelSpec {
  readonly transformations: dashboard.DataTransformerConfig[];
  readonly sortBy?: { readonly displayName: string; readonly desc?: boolean };
}

/** A table of instant queries in table format, joined by `transformations`. */
export function tablePanel(spec: TableSpec): table.PanelBuilder {
  const builder = apply(new table.PanelBuilder(), spec, "table")
    .transformations(spec.transformations)
    .cellHeight(common.TableCellHeight.Sm);
  if (spec.sortBy !== undefined) {
    builder.sortBy([
      new common.TableSortByFieldStateBuilder()
        .displayName(spec.sortBy.displayName)
        .desc(spec.sortBy.desc ?? false),
    ]);
  }
  return builder;
}

/** A row that groups the panels added after it. */
export function row(title: string): dashboard.RowBuilder {
  return new dashboard.RowBuilder(title).collapsed(false);
}
