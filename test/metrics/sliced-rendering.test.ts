/**
 * The sliced rendering of `/metrics` writes exactly what prom-client's `Registry.metrics()`
 * writes, however often it stops to let the event loop run.
 */
import { Counter, Gauge, Histogram, Registry, Summary, collectDefaultMetrics } from "prom-client";
import { describe, expect, it } from "vitest";
import { PAUSE } from "../../src/metrics/definitions/series.js";
import {
  registryFamilies,
  slicedRendering,
  type FamilyText,
} from "../../src/metrics/rendering/sliced-rendering.js";

function registry(processMetrics: boolean): Registry {
  const r = new Registry();
  const counter = new Counter({
    name: "test_events_total",
    help: 'Events, with "quotes", a back\\slash\nand a new line in the help.',
    labelNames: ["project", "action"],
    registers: [r],
  });
  counter.inc({ project: "p-1", action: "start_compute" }, 3);
  counter.inc({ project: 'odd "value"', action: "back\\slash\nnew line" });
  for (let i = 0; i < 3000; i++) counter.inc({ project: `p-${i}`, action: "apply_config" }, i);
  const gauge = new Gauge({ name: "test_level", help: "A level.", registers: [r] });
  gauge.set(Number.NaN);
  const signed = new Gauge({
    name: "test_signed",
    help: "Signed.",
    labelNames: ["side"],
    registers: [r],
  });
  signed.set({ side: "up" }, Number.POSITIVE_INFINITY);
  signed.set({ side: "down" }, Number.NEGATIVE_INFINITY);
  signed.set({ side: "small" }, 1e-7);
  const histogram = new Histogram({
    name: "test_duration_seconds",
    help: "Durations.",
    labelNames: ["route"],
    buckets: [0.1, 1, 10],
    registers: [r],
  });
  histogram.observe({ route: "a" }, 0.05);
  histogram.observe({ route: "b" }, 5);
  histogram.observe({ route: "b" }, 50);
  const summary = new Summary({
    name: "test_sizes",
    help: "Sizes.",
    percentiles: [0.5, 0.9],
    registers: [r],
  });
  summary.observe(3);
  new Gauge({ name: "test_empty", help: "Never set.", labelNames: ["x"], registers: [r] });
  if (processMetrics) collectDefaultMetrics({ register: r });
  return r;
}

/** The process's own values change between two renderings: those are compared by shape. */
function comparable(text: string): string {
  return text
    .split("\n")
    .map((line) =>
      line.startsWith("#") || line.startsWith("test_") ? line : line.replace(/ \S+$/, " V"),
    )
    .join("\n");
}

describe("the sliced rendering of a registry", () => {
  it("writes prom-client's bytes, in one slice", async () => {
    const r = registry(true);
    expect(comparable((await slicedRendering(registryFamilies(r), 1e9).render()).toString())).toBe(
      comparable(await r.metrics()),
    );
  });

  it("writes prom-client's bytes when it lets the event loop run after every few series", async () => {
    // Without the process metrics: the active resources differ while the rendering waits.
    const merged = Registry.merge([registry(false), new Registry()]);
    let turns = 0;
    const counting = setInterval(() => (turns += 1), 0);
    const sliced = (await slicedRendering(registryFamilies(merged), 0).render()).toString();
    clearInterval(counting);
    expect(sliced).toBe(await merged.metrics());
    expect(turns).toBeGreaterThan(0);
  });
});

describe("the sliced rendering of families of our own", () => {
  /** A family of many series that notes whether the event loop ran before its last line. */
  function manyLines(): { lines: () => Generator<string>; loopRanWithin: () => boolean } {
    let loopRan = false;
    let loopRanWithin = false;
    function* lines(): Generator<string> {
      setImmediate(() => (loopRan = true));
      yield "# HELP test_many Many series.";
      yield "# TYPE test_many gauge";
      for (let i = 0; i < 5000; i++) yield `test_many{i="${i}"} ${i}`;
      loopRanWithin = loopRan;
    }
    return { lines, loopRanWithin: () => loopRanWithin };
  }
  const expected = [...manyLines().lines()].join("\n");

  it("writes the lines of each family, families apart by a blank line", async () => {
    const many = manyLines();
    const families = [many.lines, () => ["# HELP test_b B.", "# TYPE test_b gauge"]];
    expect((await slicedRendering(families, 1e9).render()).toString()).toBe(
      `${expected}\n\n# HELP test_b B.\n# TYPE test_b gauge\n`,
    );
    expect(many.loopRanWithin()).toBe(false);
  });

  it("writes each rendering whole, whether it is larger or smaller than the one before", async () => {
    const sized = (count: number) =>
      Array.from({ length: count }, (_, i) => `test_sized{i="${i}"} ${i}`);
    let count = 0;
    const rendering = slicedRendering([() => sized(count)], 0);
    for (count of [10, 20_000, 100, 50_000, 30_000, 0]) {
      const body = await rendering.render();
      expect(body.toString(), `${count} lines`).toBe(`${sized(count).join("\n")}\n`);
      rendering.recycle(body);
    }
  });

  it("writes into a body given back, and never into one still read", async () => {
    let version = 0;
    const rendering = slicedRendering([() => [`test_version ${version}`]], 0);
    const first = await rendering.render();
    version = 1;
    const second = await rendering.render();
    expect(first.toString()).toBe("test_version 0\n");
    expect(second.buffer).not.toBe(first.buffer);

    rendering.recycle(first);
    version = 2;
    const third = await rendering.render();
    expect(third.buffer).toBe(first.buffer);
    expect(third.toString()).toBe("test_version 2\n");
    expect(second.toString()).toBe("test_version 1\n");

    // A buffer it did not write is not taken.
    const foreign = Buffer.alloc(1 << 20);
    rendering.recycle(foreign);
    version = 3;
    expect((await rendering.render()).buffer).not.toBe(foreign.buffer);
    expect(foreign.every((byte) => byte === 0)).toBe(true);
  });

  it("lets the event loop run inside a family of many series, and writes the same bytes", async () => {
    const many = manyLines();
    expect((await slicedRendering([many.lines], 0).render()).toString()).toBe(`${expected}\n`);
    expect(many.loopRanWithin()).toBe(true);
  });

  it("lets the event loop run at the pauses of a family that sums before it writes", async () => {
    // As a family across projects: a pause after each project summed, the one line at the end.
    let loopRan = false;
    let loopRanBeforeLine = false;
    function* sum(): Generator<string | typeof PAUSE> {
      setImmediate(() => (loopRan = true));
      let total = 0;
      for (let project = 0; project < 3; project++) {
        total += project;
        yield PAUSE;
      }
      loopRanBeforeLine = loopRan;
      yield `test_sum ${total}`;
    }
    const families: FamilyText[] = [sum, () => [PAUSE], () => ["test_after 1"]];
    expect((await slicedRendering(families, 0).render()).toString()).toBe(
      "test_sum 3\n\n\n\ntest_after 1\n",
    );
    expect(loopRanBeforeLine).toBe(true);
  });
});
