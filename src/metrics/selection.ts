/**
 * Cardinality controls: which families are registered at all. A name in `include` or `exclude`
 * that names no family is a configuration error, reported rather than silently ignored.
 */
import type { MetricSpec } from "./catalogue.js";

export interface SelectionOptions {
  /** Only these families (all when absent). */
  readonly include?: readonly string[];
  /** Never these families. */
  readonly exclude?: readonly string[];
  /** Also the per-project operation-duration histogram. */
  readonly perProjectHistograms?: boolean;
}

/** Whether a family of `known` is registered; throws when the lists name unknown families. */
export function nameFilter(
  known: readonly string[],
  options: SelectionOptions,
): (name: string) => boolean {
  const names = new Set(known);
  for (const list of ["include", "exclude"] as const) {
    const unknown = (options[list] ?? []).filter((name) => !names.has(name));
    if (unknown.length > 0) {
      throw new Error(`metrics ${list} names unknown metrics: ${unknown.join(", ")}`);
    }
  }
  const include = options.include === undefined ? undefined : new Set(options.include);
  const exclude = new Set(options.exclude);
  return (name) => (include === undefined || include.has(name)) && !exclude.has(name);
}

/** Whether a catalogue entry is registered: selected by name and, if opt-in, opted in. */
export function specFilter(
  byName: (name: string) => boolean,
  options: SelectionOptions,
): (spec: MetricSpec) => boolean {
  return (spec) => byName(spec.name) && (spec.optIn === undefined || options[spec.optIn] === true);
}
