/**
 * Cardinality controls: which families are registered at all. The detail level chooses the
 * families first; `include` and `exclude` then choose among them. A name in `include` or
 * `exclude` that names no family, or an included family the level leaves out, is a
 * configuration error, reported rather than silently ignored.
 */
import { CATALOGUE, DETAIL_LEVELS, type DetailLevel, type MetricSpec } from "./catalogue.js";

export interface SelectionOptions {
  /** How much per-project and per-endpoint detail is served (default `standard`). */
  readonly detail?: DetailLevel;
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
  const detail = options.detail ?? DEFAULT_DETAIL;
  const included = new Set(options.include);
  const dropped = (CATALOGUE as readonly MetricSpec[])
    .filter((spec) => included.has(spec.name) && !atLevel(spec, detail))
    .map((spec) => `${spec.name} (from ${spec.level ?? "minimal"})`);
  if (dropped.length > 0) {
    throw new Error(
      `metrics include names metrics that detail ${detail} does not serve: ${dropped.join(", ")}`,
    );
  }
  const include = options.include === undefined ? undefined : new Set(options.include);
  const exclude = new Set(options.exclude);
  return (name) => (include === undefined || include.has(name)) && !exclude.has(name);
}

export const DEFAULT_DETAIL: DetailLevel = "standard";

/** Whether a family is served at a detail level: its own level or a later one. */
export function atLevel(spec: MetricSpec, detail: DetailLevel): boolean {
  return DETAIL_LEVELS.indexOf(spec.level ?? "minimal") <= DETAIL_LEVELS.indexOf(detail);
}

/**
 * Whether a catalogue entry is registered: at the detail level, selected by name and, if
 * opt-in, opted in (the opt-in family is served at every level once it is opted in).
 */
export function specFilter(
  byName: (name: string) => boolean,
  options: SelectionOptions,
): (spec: MetricSpec) => boolean {
  const detail = options.detail ?? DEFAULT_DETAIL;
  return (spec) =>
    byName(spec.name) &&
    atLevel(spec, detail) &&
    (spec.optIn === undefined || options[spec.optIn] === true);
}
