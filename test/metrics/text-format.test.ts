/**
 * The exposition text written for projected families: escaped and formatted exactly as
 * prom-client writes its own families, so that a scrape cannot tell which one wrote a family.
 */
import { Gauge, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { formatValue } from "../../src/metrics/definitions/series.js";
import {
  familyHeader,
  histogramLines,
  sampleLines,
} from "../../src/metrics/rendering/text-format.js";

const ODD_VALUES = ["back\\slash", 'a "quoted" word', "two\nlines", 'all \\ " \n of them'];
const NUMBERS = [
  0,
  3,
  -7,
  42_000_000,
  0.1,
  6.4,
  1e-7,
  1e21,
  -2.5e-9,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
];

/** prom-client's rendering of one gauge family holding `samples`. */
async function promClientGauge(
  help: string,
  samples: readonly { labels: Record<string, string>; value: number }[],
): Promise<string> {
  const registry = new Registry();
  const gauge = new Gauge({
    name: "test_level",
    help,
    labelNames: ["kind", "index"],
    registers: [registry],
  });
  for (const { labels, value } of samples) gauge.set(labels, value);
  return registry.getSingleMetricAsString("test_level");
}

describe("the exposition text of a projected family", () => {
  it("escapes backslashes, double quotes and new lines in label values", () => {
    const lines = [
      ...sampleLines("test_level", [{ labels: { a: ODD_VALUES[3] ?? "" }, value: 1 }]),
    ];
    expect(lines).toEqual(['test_level{a="all \\\\ \\" \\n of them"} 1']);
  });

  it("escapes backslashes and new lines in HELP, and leaves double quotes as they are", () => {
    expect(familyHeader("test_level", 'A "level",\na back\\slash.', "gauge")).toEqual([
      '# HELP test_level A "level",\\na back\\\\slash.',
      "# TYPE test_level gauge",
    ]);
  });

  it("writes NaN, infinities, integers and floats as prom-client does", () => {
    expect(NUMBERS.map(formatValue)).toEqual([
      "0",
      "3",
      "-7",
      "42000000",
      "0.1",
      "6.4",
      "1e-7",
      "1e+21",
      "-2.5e-9",
      "Nan",
      "+Inf",
      "-Inf",
    ]);
  });

  it("writes a family byte for byte as prom-client writes the same gauge", async () => {
    const help = 'Odd help: a back\\slash, a "quote" and a\nnew line.';
    const samples = [
      { labels: { kind: "plain", index: "0" }, value: 1 },
      ...ODD_VALUES.map((kind, i) => ({ labels: { kind, index: String(i) }, value: 2 })),
      ...NUMBERS.map((value, i) => ({ labels: { kind: "number", index: String(i) }, value })),
    ];
    const ours = [
      ...familyHeader("test_level", help, "gauge"),
      ...sampleLines("test_level", samples),
    ];
    expect(ours.join("\n")).toBe(await promClientGauge(help, samples));
  });

  it("writes a sample without labels without braces", () => {
    expect([...sampleLines("test_up", [{ labels: {}, value: 1 }])]).toEqual(["test_up 1"]);
  });

  it("writes a histogram's buckets cumulatively, then +Inf (the count), _sum and _count", () => {
    const lines = [
      ...histogramLines(
        "test_duration_seconds",
        [0.5, 1, 2.5],
        [
          { labels: { route: 'say "hi"' }, buckets: [1, 0, 2], sum: 4.25, count: 4 },
          { labels: {}, buckets: [0, 1], sum: 1e-7, count: 1 },
        ],
      ),
    ];
    expect(lines).toEqual([
      'test_duration_seconds_bucket{route="say \\"hi\\"",le="0.5"} 1',
      'test_duration_seconds_bucket{route="say \\"hi\\"",le="1"} 1',
      'test_duration_seconds_bucket{route="say \\"hi\\"",le="2.5"} 3',
      'test_duration_seconds_bucket{route="say \\"hi\\"",le="+Inf"} 4',
      'test_duration_seconds_sum{route="say \\"hi\\""} 4.25',
      'test_duration_seconds_count{route="say \\"hi\\""} 4',
      'test_duration_seconds_bucket{le="0.5"} 0',
      'test_duration_seconds_bucket{le="1"} 1',
      // A missing bucket count (bounds added since the counts were kept) counts nothing.
      'test_duration_seconds_bucket{le="2.5"} 1',
      'test_duration_seconds_bucket{le="+Inf"} 1',
      "test_duration_seconds_sum 1e-7",
      "test_duration_seconds_count 1",
    ]);
  });
});
