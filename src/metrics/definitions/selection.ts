/**
 * Which families are registered: the detail level chooses first, `include` and `exclude` then
 * choose among them. A name of no family, or an included family the level leaves out, is a
 * configuration problem, reported at start and by `check-config` rather than ignored.
 */
import { CATALOGUE } from "./catalogue.js";
import type { MetricSpec } from "./family.js";
import { DEFAULT_DETAIL, atLevel, levelOf, type DetailLevel } from "./levels.js";
import { familyNames, processMetricsRegistry } from "./process.js";

export interface SelectionOptions {
  /** How much per-project and per-endpoint detail is served (default `standard`). */
  readonly detail?: DetailLevel;
  /** Only these families (all when absent). */
  readonly include?: readonly string[];
  /** Never these families. */
  readonly exclude?: readonly string[];
  /** Also the per-project operation-duration histogram. */
  readonly perProjectHistograms?: boolean;
  /** Also `pgcp_branch_info` below detail `full`. */
  readonly branches?: boolean;
}

/** Whether the detail level serves a family, or an option brings it below its level. */
function served(spec: MetricSpec, detail: DetailLevel, options: SelectionOptions): boolean {
  const option = spec.belowLevelWith;
  return atLevel(spec, detail) || (option !== undefined && options[option] === true);
}

/** What is wrong with the `include` or the `exclude` list. */
export interface SelectionProblem {
  readonly list: "include" | "exclude";
  /** `names unknown metrics: …`, or the included families the level leaves out. */
  readonly text: string;
}

/**
 * The problems of the lists, given the names of every family there is (`known`): names of no
 * family, in either list, and included families that the detail level does not serve.
 */
export function selectionProblems(
  known: readonly string[],
  options: SelectionOptions,
): SelectionProblem[] {
  const names = new Set(known);
  const problems: SelectionProblem[] = [];
  for (const list of ["include", "exclude"] as const) {
    const unknown = (options[list] ?? []).filter((name) => !names.has(name));
    if (unknown.length > 0) {
      problems.push({ list, text: `names unknown metrics: ${unknown.join(", ")}` });
    }
  }
  const detail = options.detail ?? DEFAULT_DETAIL;
  const included = new Set(options.include);
  const dropped = (CATALOGUE as readonly MetricSpec[])
    .filter((spec) => included.has(spec.name) && !served(spec, detail, options))
    .map((spec) => `${spec.name} (from ${levelOf(spec)})`);
  if (dropped.length > 0) {
    const text = `names metrics that detail ${detail} does not serve: ${dropped.join(", ")}`;
    problems.push({ list: "include", text });
  }
  return problems;
}

/**
 * The problems of the lists against the catalogue and prom-client's process families, for a
 * configuration checked without starting the exporter.
 */
export function metricListProblems(options: SelectionOptions): SelectionProblem[] {
  const processNames = familyNames(processMetricsRegistry());
  return selectionProblems([...CATALOGUE.map((spec) => spec.name), ...processNames], options);
}

/** Whether a family of `known` is registered; throws when the lists have a problem. */
export function nameFilter(
  known: readonly string[],
  options: SelectionOptions,
): (name: string) => boolean {
  const [problem] = selectionProblems(known, options);
  if (problem !== undefined) throw new Error(`metrics ${problem.list} ${problem.text}`);
  const include = options.include === undefined ? undefined : new Set(options.include);
  const exclude = new Set(options.exclude);
  return (name) => (include === undefined || include.has(name)) && !exclude.has(name);
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
    served(spec, detail, options) &&
    (spec.optIn === undefined || options[spec.optIn] === true);
}
