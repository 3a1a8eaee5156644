/**
 * The families `/metrics` serves, as OpenTelemetry's metric data
 * (docs/opentelemetry.md#metrics-over-otlp): the same names, label sets and values; a counter is
 * a cumulative monotonic sum, a gauge a gauge, a histogram an explicit-bucket histogram with
 * cumulative temporality. The help text is the description and the unit comes from the name's
 * suffix. Pure: the families and the times are given.
 */
import { ValueType, type HrTime } from "@opentelemetry/api";
import {
  AggregationTemporality,
  DataPointType,
  type DataPoint,
  type MetricData,
} from "@opentelemetry/sdk-metrics";

type Labels = Readonly<Record<string, string>>;

/**
 * One family as `/metrics` serves it, as numbers: what the push reads (the metrics part's
 * `families()` gives it). A histogram series' `buckets` are per bucket (not cumulative like
 * Prometheus's `_bucket`), in the order of `bounds`; `count` counts every observation, so the
 * ones above the last bound are `count` less the buckets' sum.
 */
export type MetricFamily =
  | {
      readonly name: string;
      readonly help: string;
      readonly type: "counter" | "gauge";
      readonly samples: readonly { readonly labels: Labels; readonly value: number }[];
    }
  | {
      readonly name: string;
      readonly help: string;
      readonly type: "histogram";
      readonly bounds: readonly number[];
      readonly series: readonly {
        readonly labels: Labels;
        readonly buckets: readonly number[];
        readonly sum: number;
        readonly count: number;
      }[];
    };

/** Reads the families now. */
export type ReadMetricFamilies = () => Promise<readonly MetricFamily[]>;

/** When the points' cumulative counts started, and when they were read. */
export interface PointTimes {
  readonly startTime: HrTime;
  readonly endTime: HrTime;
}

/** Units by the name's suffix (before `_total`), as UCUM writes them. */
const UNITS: readonly (readonly [suffix: string, unit: string])[] = [
  ["_seconds", "s"],
  ["_bytes", "By"],
  ["_ratio", "1"],
];

/** The unit of a family named `name`: `s`, `By`, `1` or none. */
export function unitOf(name: string): string {
  const base = name.endsWith("_total") ? name.slice(0, -"_total".length) : name;
  return UNITS.find(([suffix]) => base.endsWith(suffix))?.[1] ?? "";
}

/**
 * The families as metric data. A family without series is left out (it carries no point), and
 * so is a point whose value is not a finite number (a gauge of NaN before its first reading):
 * OTLP/JSON cannot carry one, and a collector would refuse the whole request for it.
 */
export function metricData(families: readonly MetricFamily[], times: PointTimes): MetricData[] {
  const data: MetricData[] = [];
  for (const family of families) {
    const one = familyData(family, times);
    if (one.dataPoints.length > 0) data.push(one);
  }
  return data;
}

function familyData(family: MetricFamily, times: PointTimes): MetricData {
  const descriptor = {
    name: family.name,
    description: family.help,
    unit: unitOf(family.name),
    valueType: ValueType.DOUBLE,
  };
  const aggregationTemporality = AggregationTemporality.CUMULATIVE;
  if (family.type === "histogram") {
    return {
      descriptor,
      aggregationTemporality,
      dataPointType: DataPointType.HISTOGRAM,
      dataPoints: family.series
        .filter((s) => Number.isFinite(s.sum) && Number.isFinite(s.count))
        .map((s) => ({
          ...point(s.labels, times),
          value: {
            buckets: { boundaries: [...family.bounds], counts: bucketCounts(family.bounds, s) },
            sum: s.sum,
            count: s.count,
          },
        })),
    };
  }
  const dataPoints: DataPoint<number>[] = family.samples
    .filter((s) => Number.isFinite(s.value))
    .map((s) => ({ ...point(s.labels, times), value: s.value }));
  return family.type === "counter"
    ? {
        descriptor,
        aggregationTemporality,
        dataPointType: DataPointType.SUM,
        isMonotonic: true,
        dataPoints,
      }
    : { descriptor, aggregationTemporality, dataPointType: DataPointType.GAUGE, dataPoints };
}

function point(labels: Labels, times: PointTimes): Omit<DataPoint<never>, "value"> {
  return { startTime: times.startTime, endTime: times.endTime, attributes: { ...labels } };
}

/**
 * OTLP's bucket counts: one per bound, then the observations above the last bound (which
 * Prometheus's `+Inf` bucket counts cumulatively, with all the others).
 */
function bucketCounts(
  bounds: readonly number[],
  series: { readonly buckets: readonly number[]; readonly count: number },
): number[] {
  const counts = bounds.map((_bound, i) => series.buckets[i] ?? 0);
  const inBounds = counts.reduce((total, count) => total + count, 0);
  counts.push(Math.max(0, series.count - inBounds));
  return counts;
}
