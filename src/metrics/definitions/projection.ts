/**
 * The value function of a projected family: either a function of everything the module knows
 * (the project views and the runtime probes), or, for a family whose series each belong to one
 * project, a function of one project's view, with what it reads from it.
 */
import type { Tier } from "../../scheduler/activity-plan.js";
import type { Budget } from "../../scheduler/budget.js";
import type { ProjectView } from "../../sync/index.js";
import type { Pause } from "./series.js";

/** What the scheduler tells about its budget; `Scheduler` satisfies it. */
export interface SchedulerProbe {
  readonly budget: Pick<Budget, "stretch">;
  tierIntervalSeconds(tier: Tier): number;
}

/** An account's scheduler and limiter; `DaemonAccount` satisfies it. */
export interface AccountProbe {
  readonly name: string;
  readonly scheduler: SchedulerProbe;
  readonly client: { limiterStats(): { readonly tokensRemaining: number } };
  projects(): readonly string[];
  /** Defined while the API refuses the account's key. */
  keyRefusal(): unknown;
  /**
   * The projects polled with backoff instead of at their interval, by id: why (`refused`, or
   * how their polls fail), and when the next try is (epoch ms).
   */
  projectBackoffs(): ReadonlyMap<string, { readonly reason: string; readonly nextTryMs: number }>;
}

/** What the lease manager tells about this replica's leases; `LeaseManager` satisfies it. */
export interface LeaseProbe {
  /** This replica's id in the lease tables. */
  readonly replicaId: string;
  heldProjects(): readonly string[];
  readonly liveReplicas: number | undefined;
  readonly targetProjects: number | undefined;
  /** The projects the replicas share. */
  readonly fleetProjects: number | undefined;
  /** Of those, the ones with no live holder. */
  readonly unownedProjects: number | undefined;
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

/** The value function of a family whose series are `S`. */
export type Projection<S> = AcrossProjects<S> | PerProject<S>;
