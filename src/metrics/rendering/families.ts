/**
 * The catalogue as the families of the rendering, in its order: event families as prom-client
 * renders them, projected ones as text of our own (`text-format.ts`) from their value functions.
 */
import type { Registry } from "prom-client";
import type { ProjectView } from "../../sync/index.js";
import { CATALOGUE } from "../definitions/catalogue.js";
import type { Family, MetricSpec, ProjectedFamily } from "../definitions/family.js";
import type { Projection, ProjectionInput } from "../definitions/projection.js";
import type { HistogramSeries, Pause, Sample } from "../definitions/series.js";
import { eventRegistry, type EventFamilies } from "../events/registry.js";
import { ProjectChunks } from "./project-chunks.js";
import type { FamilyText } from "./sliced-rendering.js";
import { familyHeader, histogramLines, sampleLines } from "./text-format.js";

/**
 * Registers the selected families counted from events in `registry` (before anything counts:
 * the daemon's parts count into them from their construction).
 */
export function registerEventFamilies(
  registry: Registry,
  selected: (spec: MetricSpec) => boolean,
): EventFamilies {
  const events = eventRegistry(registry);
  for (const spec of CATALOGUE as readonly Family[]) {
    if (selected(spec) && spec.source === "events") events.register(spec);
  }
  return events;
}

/**
 * Every selected family's text, in the catalogue's order: an event family as prom-client
 * renders it from `registry` (`registerEventFamilies`), a projected one from its value function.
 * A projected family's series are computed each time the rendering reaches it (or kept, per
 * project, from an earlier rendering while the project is unchanged): counters restored from
 * committed state are therefore exactly what was committed, and a forgotten project or endpoint
 * simply has no series.
 */
export function catalogueTexts(
  registry: Registry,
  selected: (spec: MetricSpec) => boolean,
  input: ProjectionInput,
): FamilyText[] {
  const texts: FamilyText[] = [];
  const moments = renderingMoments(input);
  for (const spec of CATALOGUE as readonly Family[]) {
    if (!selected(spec)) continue;
    if (spec.source === "events") {
      texts.push(() => registry.getSingleMetricAsString(spec.name));
      continue;
    }
    // Each entry's value function yields its type's series; the loop cannot see that.
    const value = spec.value as Projection<AnySeries>;
    const text = projectedText(value, familyLines(spec), moments);
    texts.push((rendering) => withHeader(spec, () => text(rendering)));
  }
  return texts;
}

type AnySeries = Sample & HistogramSeries;

/** Writes a family's series as text lines; pauses among them are passed on. */
interface Lines<S> {
  (series: Iterable<S>): Iterable<string>;
  (series: Iterable<S | Pause>): Iterable<string | Pause>;
}

function familyLines(spec: ProjectedFamily): Lines<AnySeries> {
  function lines(series: Iterable<AnySeries>): Iterable<string>;
  function lines(series: Iterable<AnySeries | Pause>): Iterable<string | Pause>;
  function lines(series: Iterable<AnySeries | Pause>): Iterable<string | Pause> {
    return spec.type === "histogram"
      ? histogramLines(spec.name, spec.buckets, series)
      : sampleLines(spec.name, series);
  }
  return lines;
}

/**
 * A projected family's lines, for one rendering, from the copy of the views that the rendering
 * took when its first family read them (`renderingMoments`): every family of a rendering is one
 * moment's view (a view's state and listing are replaced on change, never updated in place). A
 * per-project family is written project by project, each project's series computed as the
 * rendering reaches it; one that says what it reads keeps each project's text for the next
 * renderings while its view is unchanged in that (`project-chunks.ts`). A family across
 * projects computes its series as its lines are written, over several slices, without holding
 * all of them at once.
 */
function projectedText<S>(
  projection: Projection<S>,
  lines: Lines<S>,
  moments: Moments,
): (rendering: number) => Iterable<string | Buffer | Pause> {
  if (typeof projection === "function") return (r) => lines(projection(moments(r)));
  const { series, reads } = projection;
  if (reads === undefined) {
    return (r) => lines(eachProject(moments(r).projects, series));
  }
  const chunks = new ProjectChunks({ series, reads }, lines);
  return (r) => chunks.chunks(moments(r).projects);
}

/** Each project's series in turn, each computed from its view as the rendering reaches it. */
function* eachProject<S>(
  views: Iterable<ProjectView>,
  series: (view: ProjectView) => Iterable<S>,
): Generator<S> {
  for (const view of views) yield* series(view);
}

/** The input as of a rendering (numbered by `FamilyText`'s argument). */
type Moments = (rendering: number) => ProjectionInput;

/**
 * The input as of each rendering: a copy of each project's view (its parts are never changed in
 * place), taken when the first family of the rendering reads the projects and read by all of
 * its families; a rendering whose families read only runtime values costs no copy. One copy per
 * rendering, not one per family: the copies live as long as the rendering, across slices, and
 * what outlives the young generation is copied by each collection that meets it. The last
 * rendering's copy is let go when the next rendering starts.
 */
function renderingMoments(input: ProjectionInput): Moments {
  let last: { readonly rendering: number; readonly input: ProjectionInput } | undefined;
  return (rendering) => {
    if (last?.rendering === rendering) return last.input;
    let projects: readonly ProjectView[] | undefined;
    const moment: ProjectionInput = {
      get projects() {
        return (projects ??= Array.from(input.projects, (view) => ({ ...view })));
      },
      runtime: input.runtime,
    };
    last = { rendering, input: moment };
    return moment;
  };
}

function* withHeader(
  spec: MetricSpec,
  text: () => Iterable<string | Buffer | Pause>,
): Generator<string | Buffer | Pause> {
  yield* familyHeader(spec.name, spec.help, spec.type);
  yield* text();
}
