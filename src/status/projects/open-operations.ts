/**
 * A committed state's open operations as the page shows them: how many, how many stuck, and the
 * first few (stuck first, then oldest first), summarised once per state object (states are
 * immutable and replaced on every commit).
 */
import { isEndStatus } from "../../contract/index.js";
import type { ProjectState } from "../../store/index.js";
import type { StatusLimits } from "../shared/limits.js";

export interface OpenOperationView {
  readonly id: string;
  readonly action: string;
  readonly status: string;
  readonly createdAtMs: number;
  readonly stuck: boolean;
}

/** What one committed state holds of open operations, computed once per state object. */
export interface OpenOperations {
  readonly openCount: number;
  readonly stuckCount: number;
  /** Stuck first, then oldest first; capped. */
  readonly open: readonly OpenOperationView[];
}

const summaries = new WeakMap<ProjectState, OpenOperations>();
const EMPTY_SUMMARY: OpenOperations = { openCount: 0, stuckCount: 0, open: [] };

export function openOperationsOf(
  state: ProjectState | undefined,
  limits: StatusLimits,
): OpenOperations {
  if (state === undefined) return EMPTY_SUMMARY;
  const cached = summaries.get(state);
  if (cached !== undefined) return cached;
  const openOps = state.tracked.filter((t) => !isEndStatus(t.status));
  const open = openOps
    .map((t) => ({
      id: t.id,
      action: t.action,
      status: t.status,
      createdAtMs: t.createdAtMs,
      stuck: t.stuck,
    }))
    .sort((a, b) => Number(b.stuck) - Number(a.stuck) || a.createdAtMs - b.createdAtMs)
    .slice(0, limits.openShown);
  const summary: OpenOperations = {
    openCount: openOps.length,
    stuckCount: openOps.filter((t) => t.stuck).length,
    open,
  };
  summaries.set(state, summary);
  return summary;
}
