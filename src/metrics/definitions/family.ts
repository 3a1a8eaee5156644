/**
 * What defines a metric family: its spec (name, type, labels, help, unit, section, source,
 * level) and, for a family projected when a rendering is built, the value function that
 * computes its series, declared together so that a family is read in one place.
 */
import type { DetailLevel } from "../../config/index.js";
import type { Projection } from "./projection.js";
import type { HistogramSeries, Sample } from "./series.js";

export type MetricType = "counter" | "gauge" | "histogram";

/**
 * Where a family's values come from. This decides what a restart does to it: `state` families
 * resume from the committed state, `events` families count from zero again.
 */
export type MetricSource =
  /** Projected from the committed project state (survives restarts). */
  | "state"
  /** Projected from the latest endpoint listing of the project. */
  | "listing"
  /** Projected from the outcome of the project's latest poll. */
  | "outcome"
  /** Counted from events since the process started. */
  | "events"
  /** Read when the rendering is built (limiter, scheduler, build). */
  | "runtime"
  /** Projected from what the compute probe last read of each active compute. */
  | "probe"
  /** Projected from what was read of the project beside its operations (names, branches). */
  | "directory";

/** The sections of the reference. */
export type MetricGroup =
  "operations" | "endpoints" | "computes" | "projects" | "exporter" | "api" | "alerts" | "otlp";

export interface MetricSpec {
  readonly name: string;
  readonly type: MetricType;
  readonly labels: readonly string[];
  /** One line, shown in `# HELP` and in the reference. */
  readonly help: string;
  /** The base unit the name ends with (before `_total`); empty for counts, flags and info. */
  readonly unit: string;
  readonly group: MetricGroup;
  readonly source: MetricSource;
  /** Upper bounds of a histogram's buckets, in `unit`. */
  readonly buckets?: readonly number[];
  /**
   * The least detail at which the family is served (`minimal` when absent). Families without
   * a per-project label are cheap and served at every level.
   */
  readonly level?: Exclude<DetailLevel, "minimal">;
  /** Registered only when this option is on, since it multiplies series. */
  readonly optIn?: "perProjectHistograms";
  /** Also registered below its level when this option is on. */
  readonly belowLevelWith?: "branches";
}

/** A family counted from events as they happen, by prom-client: its spec is all there is. */
export type EventFamily =
  | (MetricSpec & { readonly source: "events"; readonly type: "counter" })
  | (MetricSpec & {
      readonly source: "events";
      readonly type: "histogram";
      readonly buckets: readonly number[];
    });

type ProjectedSource = Exclude<MetricSource, "events">;

/** A family whose series `value` computes each time a rendering is built. */
export type ProjectedFamily =
  | (MetricSpec & {
      readonly source: ProjectedSource;
      readonly type: "counter" | "gauge";
      readonly value: Projection<Sample>;
    })
  | (MetricSpec & {
      readonly source: ProjectedSource;
      readonly type: "histogram";
      readonly buckets: readonly number[];
      readonly value: Projection<HistogramSeries>;
    });

/**
 * One family's definition. A projected family without its value function, or with one of the
 * wrong series type (samples for a histogram), does not compile.
 */
export type Family = EventFamily | ProjectedFamily;
