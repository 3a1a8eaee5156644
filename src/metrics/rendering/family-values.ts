/**
 * What `/metrics` serves, as numbers rather than text, for a reader that wants values (the OTLP
 * push): the same selected families, in the same order, from the same sources (prom-client's
 * registries, and the projected families' value functions over one copy of the project views),
 * so that a family and its series are there exactly when the exposition has them. A histogram's
 * buckets are per bucket, as the value functions give them: prom-client's cumulative `_bucket`
 * values are turned back into per-bucket counts here.
 */
import type { Registry } from "prom-client";
import { systemClock } from "../../clock.js";
import { CATALOGUE } from "../definitions/catalogue.js";
import type { Family, MetricSpec, ProjectedFamily } from "../definitions/family.js";
import type { Projection, ProjectionInput } from "../definitions/projection.js";
import { PAUSE, type HistogramSeries, type Labels, type Sample } from "../definitions/series.js";
import { RENDER_SLICE_MS } from "./sliced-rendering.js";

/** A counter's or a gauge's series. */
export interface SampleFamilyValues {
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "gauge";
  readonly samples: readonly Sample[];
}

/** A histogram's series, each with per-bucket counts in the order of `bounds`. */
export interface HistogramFamilyValues {
  readonly name: string;
  readonly help: string;
  readonly type: "histogram";
  /** The buckets' upper bounds, without `+Inf`. */
  readonly bounds: readonly number[];
  readonly series: readonly HistogramSeries[];
}

/** One family as `/metrics` serves it. */
export type FamilyValues = SampleFamilyValues | HistogramFamilyValues;

/** Where the families are read from: what the exposition renders. */
export interface FamilySources {
  /** The families counted from events. */
  readonly registry: Registry;
  /** prom-client's process families, served after ours. */
  readonly processRegistry: Registry;
  readonly selected: (spec: MetricSpec) => boolean;
  readonly input: ProjectionInput;
}

/**
 * Reads every served family's values now. Like a rendering, it lets the event loop run whenever
 * a stretch of work has taken `RENDER_SLICE_MS`, so that thousands of projects' series do not
 * hold it; every family reads one copy of the views, taken at the start, as one rendering does.
 */
export function familyValuesReader(sources: FamilySources): () => Promise<FamilyValues[]> {
  const specs = (CATALOGUE as readonly Family[]).filter(sources.selected);
  return async () => {
    const moment: ProjectionInput = {
      projects: Array.from(sources.input.projects, (view) => ({ ...view })),
      runtime: sources.input.runtime,
    };
    const slice = new Slice();
    const families: FamilyValues[] = [];
    for (const spec of specs) {
      if (spec.source === "events") {
        const metric = sources.registry.getSingleMetric(spec.name);
        const read = metric === undefined ? undefined : fromPromClient(await metric.get());
        if (read !== undefined) families.push(read);
      } else {
        families.push(await projected(spec, moment, slice));
      }
      await slice.breathe();
    }
    for (const family of await sources.processRegistry.getMetricsAsJSON()) {
      const read = fromPromClient(family);
      if (read !== undefined) families.push(read);
    }
    return families;
  };
}

/** A projected family's series, from its value function as the rendering calls it. */
async function projected(
  spec: ProjectedFamily,
  input: ProjectionInput,
  slice: Slice,
): Promise<FamilyValues> {
  const { name, help } = spec;
  if (spec.type === "histogram") {
    const series = await collect(spec.value, input, slice);
    return { name, help, type: "histogram", bounds: spec.buckets, series };
  }
  return { name, help, type: spec.type, samples: await collect(spec.value, input, slice) };
}

async function collect<S>(
  projection: Projection<S>,
  input: ProjectionInput,
  slice: Slice,
): Promise<S[]> {
  const out: S[] = [];
  if (typeof projection === "function") {
    for (const item of projection(input)) {
      if (item === PAUSE) await slice.breathe();
      else out.push(item);
    }
    return out;
  }
  for (const view of input.projects) {
    for (const item of projection.series(view)) out.push(item);
    await slice.tick();
  }
  return out;
}

type PromFamily = Awaited<ReturnType<Registry["getMetricsAsJSON"]>>[number];
type PromValue = PromFamily["values"][number] & { readonly metricName?: string };

/**
 * A prom-client family's values. Its typings call the type a numeric enum; at run time it is
 * the type's name, as the exposition writes it. No summary is registered: one would be left out.
 */
function fromPromClient(family: PromFamily): FamilyValues | undefined {
  const { name, help } = family;
  const type = family.type as unknown as string;
  if (type === "counter" || type === "gauge") {
    const samples = family.values.map((v) => ({ labels: labelsOf(v.labels), value: v.value }));
    return { name, help, type, samples };
  }
  if (type === "histogram") return fromCumulative(name, help, family.values);
  return undefined;
}

/**
 * A prom-client histogram from its exposition values: per series (its labels less `le`), the
 * cumulative `_bucket` values in the order of the bounds, then `+Inf`, `_sum` and `_count`.
 */
function fromCumulative(
  name: string,
  help: string,
  values: readonly PromValue[],
): HistogramFamilyValues {
  interface Building {
    readonly labels: Labels;
    readonly cumulative: number[];
    sum: number;
    count: number;
  }
  const byLabels = new Map<string, Building>();
  const bounds: number[] = [];
  for (const value of values) {
    const { le, ...rest } = labelsOf(value.labels);
    const key = JSON.stringify(rest);
    let series = byLabels.get(key);
    if (series === undefined) {
      series = { labels: rest, cumulative: [], sum: 0, count: 0 };
      byLabels.set(key, series);
    }
    if (value.metricName === `${name}_bucket`) {
      if (le === "+Inf") continue;
      series.cumulative.push(value.value);
      // Every series of a prom-client histogram has the same bounds: the first one's suffice.
      if (byLabels.size === 1) bounds.push(Number(le));
    } else if (value.metricName === `${name}_sum`) {
      series.sum = value.value;
    } else if (value.metricName === `${name}_count`) {
      series.count = value.value;
    }
  }
  const series = [...byLabels.values()].map(({ labels, cumulative, sum, count }) => ({
    labels,
    buckets: cumulative.map((total, i) => total - (i === 0 ? 0 : (cumulative[i - 1] ?? 0))),
    sum,
    count,
  }));
  return { name, help, type: "histogram", bounds, series };
}

/** prom-client's label values, some of them numbers (`le`, a version's parts), as text. */
function labelsOf(labels: Readonly<Record<string, string | number | undefined>>): Labels {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(labels)) {
    if (value !== undefined) out[key] = String(value);
  }
  return out;
}

/** Pieces of work between two looks at the clock: a project's series are one piece. */
const PIECES_PER_LOOK = 16;

/** A stretch of work that lets the event loop run once it has taken `RENDER_SLICE_MS`. */
class Slice {
  #started = systemClock.monotonic();
  #pieces = 0;

  /** One piece done: looks at the clock every few pieces. */
  async tick(): Promise<void> {
    if (++this.#pieces % PIECES_PER_LOOK === 0) await this.breathe();
  }

  async breathe(): Promise<void> {
    if (systemClock.monotonic() - this.#started < RENDER_SLICE_MS) return;
    await new Promise<void>((resolve) => {
      setImmediate(resolve);
    });
    this.#started = systemClock.monotonic();
  }
}
