/**
 * What the compute probe knows of a project's computes, as its row shows them: failing probes
 * first, then advice, then the rest; each with its endpoint's name once listed.
 */
import { maxConnectionsFor } from "../../contract/index.js";
import type {
  AdviceReason,
  ComputeProbeState,
  ProbeFailureReason,
  ProjectView,
} from "../../sync/index.js";
import type { StatusLimits } from "../shared/limits.js";
import { nameOrUndefined, type Clean } from "../shared/text.js";

/** What the compute probe knows of one endpoint's compute. */
export interface ComputeStatus {
  readonly endpointId: string;
  /** The endpoint's name from its latest listing (from outside: escape it), once known. */
  readonly endpointName: string | undefined;
  readonly state: ComputeProbeState;
  /** The latest reading of the compute's current start, if any. */
  readonly reading:
    | {
        readonly atMs: number;
        readonly startedAtMs: number;
        /** Percent; undefined before the cache has been read from. */
        readonly hitRatio: number | undefined;
        readonly connections: number;
        readonly maxConnections: number | undefined;
      }
    | undefined;
  /** The current run of failed probes: why, since when, how many, the latest message. */
  readonly failure:
    | {
        readonly reason: ProbeFailureReason;
        readonly message: string;
        readonly sinceMs: number;
        readonly count: number;
      }
    | undefined;
  readonly advised: readonly AdviceReason[];
}

/** The computes of a project's row: failing probes first, then advice, then the rest. */
export function computeRows(
  project: ProjectView | undefined,
  limits: StatusLimits,
  clean: Clean,
): ComputeStatus[] {
  const computes = [...(project?.computes?.values() ?? [])];
  if (computes.length === 0) return [];
  const rank = (c: (typeof computes)[number]) =>
    c.up === false ? 0 : c.advised.length > 0 ? 1 : c.reading !== undefined ? 2 : 3;
  const listed = new Map(project?.endpoints?.map((e) => [e.id, e]));
  return computes
    .map((c, i) => ({ c, i }))
    .sort((a, b) => rank(a.c) - rank(b.c) || a.i - b.i)
    .slice(0, limits.computesShown)
    .map(({ c }) => {
      const endpoint = listed.get(c.endpointId);
      const cu = endpoint?.autoscaling_limit_min_cu;
      return {
        endpointId: c.endpointId,
        endpointName: nameOrUndefined(endpoint?.name, clean),
        state: c.state,
        reading:
          c.reading === undefined
            ? undefined
            : {
                atMs: c.reading.atMs,
                startedAtMs: c.reading.startedAtMs,
                hitRatio: c.reading.hitRatio,
                connections: c.reading.connections,
                maxConnections: cu === undefined ? undefined : maxConnectionsFor(cu),
              },
        failure:
          c.failure === undefined ? undefined : { ...c.failure, message: clean(c.failure.message) },
        advised: c.advised,
      };
    });
}
