/**
 * Turns the catalogue into prom-client families in a registry. A projected family computes its
 * series from the projection input each time the registry renders it: counters restored from
 * committed state are therefore exactly what was committed, and a forgotten project or endpoint
 * simply has no series. Event families are ordinary prom-client counters and histograms.
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import {
  CATALOGUE,
  type EventCounterName,
  type EventHistogramName,
  type MetricSpec,
} from "./catalogue.js";
import type { HistogramSeries, ProjectionInput, Sample } from "./projection.js";
import { PROJECTIONS } from "./projections.js";

/** The event families, by name; undefined for a family that was not selected. */
export interface EventFamilies {
  counter(name: EventCounterName): Counter | undefined;
  histogram(name: EventHistogramName): Histogram | undefined;
}

export function registerCatalogue(
  registry: Registry,
  selected: (spec: MetricSpec) => boolean,
  input: ProjectionInput,
): EventFamilies {
  const counters = new Map<string, Counter>();
  const histograms = new Map<string, Histogram>();
  for (const spec of CATALOGUE) {
    if (!selected(spec)) continue;
    const config = {
      name: spec.name,
      help: spec.help,
      labelNames: spec.labels,
      registers: [registry],
    };
    if (spec.source === "events") {
      if (spec.type === "counter") counters.set(spec.name, new Counter(config));
      else histograms.set(spec.name, new Histogram({ ...config, buckets: [...spec.buckets] }));
      continue;
    }
    // `Projections` ties each name to the series type of its entry; the loop cannot see that.
    const project = PROJECTIONS[spec.name] as (
      input: ProjectionInput,
    ) => Iterable<Sample & HistogramSeries>;
    const series = () => project(input);
    if (spec.type === "counter") new ProjectedCounter(config, series);
    else if (spec.type === "gauge") new ProjectedGauge(config, series);
    else new ProjectedHistogram({ ...config, buckets: [...spec.buckets] }, series);
  }
  return {
    counter: (name) => counters.get(name),
    histogram: (name) => histograms.get(name),
  };
}

interface Config {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly registers: Registry[];
}

class ProjectedCounter extends Counter {
  readonly #series: () => Iterable<Sample>;

  constructor(config: Config, series: () => Iterable<Sample>) {
    super(config);
    this.#series = series;
  }

  override get() {
    return super.get().then((family) => ({ ...family, values: [...this.#series()] }));
  }
}

class ProjectedGauge extends Gauge {
  readonly #series: () => Iterable<Sample>;

  constructor(config: Config, series: () => Iterable<Sample>) {
    super(config);
    this.#series = series;
  }

  override get() {
    return super.get().then((family) => ({ ...family, values: [...this.#series()] }));
  }
}

/**
 * A histogram whose bucket counts are given (persisted), not observed by this process.
 * prom-client's registry renders a histogram through `getForPromString()`, a method its type
 * declarations leave out, and its `get()` calls it too; overriding it covers both.
 */
class ProjectedHistogram extends Histogram {
  readonly #series: () => Iterable<HistogramSeries>;
  readonly #config: Config & { buckets: readonly number[] };

  constructor(config: Config & { buckets: number[] }, series: () => Iterable<HistogramSeries>) {
    super(config);
    this.#series = series;
    this.#config = config;
  }

  getForPromString(): Promise<RenderedHistogram> {
    const { name, help } = this.#config;
    return Promise.resolve({
      name,
      help,
      type: "histogram",
      values: this.#values(),
      aggregator: "sum",
    });
  }

  #values(): RenderedHistogram["values"] {
    const { name, buckets: bounds } = this.#config;
    const values = [];
    for (const { labels, buckets, sum, count } of this.#series()) {
      let cumulative = 0;
      for (const [i, le] of bounds.entries()) {
        cumulative += buckets[i] ?? 0;
        values.push({ metricName: `${name}_bucket`, labels: { ...labels, le }, value: cumulative });
      }
      // `+Inf` is the count itself, so the two agree even when bucket counts were reset.
      values.push({
        metricName: `${name}_bucket`,
        labels: { ...labels, le: "+Inf" },
        value: count,
      });
      values.push({ metricName: `${name}_sum`, labels, value: sum });
      values.push({ metricName: `${name}_count`, labels, value: count });
    }
    return values;
  }
}

/** What prom-client's registry expects from `getForPromString()`. */
interface RenderedHistogram {
  readonly name: string;
  readonly help: string;
  readonly type: "histogram";
  readonly values: { metricName: string; labels: Record<string, string | number>; value: number }[];
  readonly aggregator: "sum";
}
