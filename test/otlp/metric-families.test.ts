/**
 * The mapping of our families to OpenTelemetry's metric data: counters are cumulative monotonic
 * sums, gauges gauges, histograms explicit-bucket histograms whose counts are per bucket with
 * the observations above the last bound at the end; units come from the name's suffix.
 */
import { AggregationTemporality, DataPointType } from "@opentelemetry/sdk-metrics";
import { expect, it } from "vitest";
import {
  metricData,
  unitOf,
  type MetricFamily,
  type PointTimes,
} from "../../src/otlp/wire/metric-families.js";

const times: PointTimes = { startTime: [1_700_000_000, 0], endTime: [1_700_000_060, 500] };

it("takes the unit from the name's suffix and keeps the name as it is", () => {
  expect(unitOf("pgcp_operation_duration_seconds")).toBe("s");
  expect(unitOf("pgcp_api_rate_limit_wait_seconds_total")).toBe("s");
  expect(unitOf("process_resident_memory_bytes")).toBe("By");
  expect(unitOf("pgcp_endpoint_file_cache_hit_ratio")).toBe("1");
  expect(unitOf("pgcp_operations_total")).toBe("");
  expect(unitOf("pgcp_seconds_budget_info")).toBe("");
});

it("maps a counter, a gauge and a histogram, per bucket and cumulative", () => {
  const families: MetricFamily[] = [
    {
      name: "pgcp_operations_total",
      help: "Arrivals.",
      type: "counter",
      samples: [{ labels: { project: "p-1", action: "start_compute" }, value: 4 }],
    },
    { name: "pgcp_project_up", help: "Up.", type: "gauge", samples: [{ labels: {}, value: 1 }] },
    {
      name: "pgcp_operation_duration_seconds",
      help: "Durations.",
      type: "histogram",
      bounds: [1, 5, 10],
      // 2 observations under 1 s, none in (1, 5], 1 in (5, 10], and 3 above 10 s.
      series: [{ labels: { action: "a" }, buckets: [2, 0, 1], sum: 61.5, count: 6 }],
    },
  ];
  const [counter, gauge, histogram] = metricData(families, times);
  expect(counter).toEqual({
    descriptor: { name: "pgcp_operations_total", description: "Arrivals.", unit: "", valueType: 1 },
    aggregationTemporality: AggregationTemporality.CUMULATIVE,
    dataPointType: DataPointType.SUM,
    isMonotonic: true,
    dataPoints: [{ ...times, attributes: { project: "p-1", action: "start_compute" }, value: 4 }],
  });
  expect(gauge).toMatchObject({
    dataPointType: DataPointType.GAUGE,
    dataPoints: [{ ...times, attributes: {}, value: 1 }],
  });
  expect(histogram).toMatchObject({
    descriptor: { name: "pgcp_operation_duration_seconds", unit: "s" },
    aggregationTemporality: AggregationTemporality.CUMULATIVE,
    dataPointType: DataPointType.HISTOGRAM,
    dataPoints: [
      {
        attributes: { action: "a" },
        value: { buckets: { boundaries: [1, 5, 10], counts: [2, 0, 1, 3] }, sum: 61.5, count: 6 },
      },
    ],
  });
});

it("leaves out families without series and values that are not finite numbers", () => {
  const data = metricData(
    [
      { name: "pgcp_incidents_active", help: "", type: "gauge", samples: [] },
      {
        name: "nodejs_eventloop_lag_mean_seconds",
        help: "",
        type: "gauge",
        samples: [{ labels: {}, value: NaN }],
      },
      {
        name: "pgcp_project_up",
        help: "",
        type: "gauge",
        samples: [
          { labels: { project: "a" }, value: 1 },
          { labels: { project: "b" }, value: Infinity },
        ],
      },
    ],
    times,
  );
  expect(data.map((d) => [d.descriptor.name, d.dataPoints.length])).toEqual([
    ["pgcp_project_up", 1],
  ]);
});
