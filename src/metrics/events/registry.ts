/**
 * The families counted from events: ordinary prom-client counters and histograms, registered
 * from their catalogue entries and found by name by the observers that count into them.
 */
import { Counter, Histogram, type Registry } from "prom-client";
import type { EventCounterName, EventHistogramName } from "../definitions/catalogue.js";
import type { EventFamily } from "../definitions/family.js";

/** The event families, by name; undefined for a family that was not selected. */
export interface EventFamilies {
  counter(name: EventCounterName): Counter | undefined;
  histogram(name: EventHistogramName): Histogram | undefined;
}

export interface EventRegistry extends EventFamilies {
  /** Registers the family of `spec` in the registry. */
  register(spec: EventFamily): void;
}

/** Event families registered in `registry` as they are named to `register`. */
export function eventRegistry(registry: Registry): EventRegistry {
  const counters = new Map<string, Counter>();
  const histograms = new Map<string, Histogram>();
  return {
    register(spec) {
      const config = {
        name: spec.name,
        help: spec.help,
        labelNames: spec.labels,
        registers: [registry],
      };
      if (spec.type === "counter") counters.set(spec.name, new Counter(config));
      else histograms.set(spec.name, new Histogram({ ...config, buckets: [...spec.buckets] }));
    },
    counter: (name) => counters.get(name),
    histogram: (name) => histograms.get(name),
  };
}
