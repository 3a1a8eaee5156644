/**
 * The shape of a projected family: a function from what the module knows (project views and
 * runtime probes) to the family's series, called each time the rendering is built, or, for a
 * family whose series each belong to one project, a function of one project's view. One is
 * needed for every catalogue entry that is not counted from events; `Projections` makes a
 * missing one a compile error, and `projected-families.ts` holds them all.
 */
import type { Budget, Lane } from "../scheduler/budget.js";
import type { MetricName, ProjectedName, SpecOf } from "./catalogue.js";
import type { ProjectView } from "../sync/index.js";

export type Labels = Readonly<Record<string, string>>;

/** One series of a counter or gauge. */
export interface Sample {
  readonly labels: Labels;
  readonly value: number;
}

/** One series of a histogram. */
export interface HistogramSeries {
  readonly labels: Labels;
  /** Observations per bucket, not cumulative, in the order of the family's bounds. */
  readonly buckets: readonly number[];
  readonly sum: number;
  /** All observations (the `+Inf` bucket). */
  readonly count: number;
}

/** What the scheduler tells about its budget; `Scheduler` satisfies it. */
export interface SchedulerProbe {
  readonly budget: Pick<Budget, "stretch">;
  effectiveIntervalSeconds(lane: Lane): number;
}

/** An account's scheduler and limiter; `DaemonAccount` satisfies it. */
export interface AccountProbe {
  readonly name: string;
  readonly scheduler: SchedulerProbe;
  readonly client: { limiterStats(): { readonly tokensRemaining: number } };
  projects(): readonly string[];
  /** Defined while the API refuses the account's key. */
  keyRefusal(): unknown;
}

/** What the lease manager tells about this replica's leases; `LeaseManager` satisfies it. */
export interface LeaseProbe {
  heldProjects(): readonly string[];
  readonly liveReplicas: number | undefined;
  readonly targetProjects: number | undefined;
  /** Epoch milliseconds. */
  readonly lastHeartbeatMs: number | undefined;
}

/** Values read when a rendering is built. A probe returning undefined omits its series. */
export interface RuntimeProbes {
  /** The exporter's version, for `pgcp_build_info`. */
  readonly version: string;
  /** The git commit it was built from, when known, for `pgcp_build_info`. */
  readonly revision?: string | undefined;
  /** The accounts, each with its scheduler and rate limiter. */
  readonly accounts?: (() => readonly AccountProbe[] | undefined) | undefined;
  /** The lease manager (Postgres state store only). */
  readonly leases?: (() => LeaseProbe | undefined) | undefined;
  /** How the configuration was last (re)loaded. */
  readonly configLoads?: (() => ConfigLoadProbe) | undefined;
}

/** The outcome of the last configuration load (the start, or a SIGHUP reload). */
export interface ConfigLoadProbe {
  readonly lastReloadSuccessful: boolean;
  /** Epoch milliseconds of the last successful load. */
  readonly lastSuccessMs: number;
}

export interface ProjectionInput {
  readonly projects: Iterable<ProjectView>;
  readonly runtime: RuntimeProbes;
}

/** The series type of a family: histogram series or samples. */
export type SeriesOf<N extends MetricName> = SpecOf<N>["type"] extends "histogram"
  ? HistogramSeries
  : Sample;

/**
 * Yielded by a family across projects between two projects' worth of work: the rendering may
 * let the event loop run there, so that summing thousands of projects is not one long step.
 */
export const PAUSE: unique symbol = Symbol("pause");
export type Pause = typeof PAUSE;

/**
 * A family whose series are computed from all the projects at once (sums, runtime values).
 * One that loops over the projects yields `PAUSE` after each.
 */
export type AcrossProjects<S> = (input: ProjectionInput) => Iterable<S | Pause>;

/** A family whose series each belong to one project, computed from that project's view alone. */
export interface PerProject<S> {
  readonly series: (view: ProjectView) => Iterable<S>;
  /**
   * When given, each project's text is kept between renderings and written again only when
   * one of the values these pick from the view is no longer the same (`===`) as at the last
   * rendering. Each value read must therefore be replaced on change, never updated in place
   * (the view's state, listing and their parts are), and `series` must read nothing else.
   * Worth it for a family of several lines per project (per endpoint, per action); for one
   * short line, the kept text costs more memory than writing it again.
   */
  readonly reads?: readonly ((view: ProjectView) => unknown)[];
}

export type Projection<N extends MetricName> =
  AcrossProjects<SeriesOf<N>> | PerProject<SeriesOf<N>>;

export type Projections = { readonly [N in ProjectedName]: Projection<N> };
