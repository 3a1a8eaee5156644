import { US_PER_SECOND } from "../time.js";
import type { ProjectState } from "./state.js";

/** One status an operation will reach, `offsetUs` after it starts running. */
export interface PlanStep {
  readonly status: string;
  readonly offsetUs: number;
  readonly error?: string;
}

/** Decides how each new operation will unfold: its statuses and when it reaches them. */
export interface PlanPolicy {
  planFor(project: ProjectState, action: string): readonly PlanStep[];
}

/**
 * How long each action runs when nothing goes wrong, in seconds. Chosen so that every status
 * change lands on a distinct whole second of `updated_at` and tests can step through them.
 */
export const NORMAL_DURATION_SECONDS: Readonly<Record<string, number>> = {
  apply_config: 1,
  apply_storage_config: 1,
  check_availability: 5,
  create_branch: 1,
  create_timeline: 2,
  delete_tenant: 3,
  start_compute: 2,
  suspend_compute: 1,
};

/** Duration for actions not in the table. */
const FALLBACK_DURATION_SECONDS = 1;

export function normalDurationUs(action: string): number {
  return (NORMAL_DURATION_SECONDS[action] ?? FALLBACK_DURATION_SECONDS) * US_PER_SECOND;
}

/** running → finished after the action's normal duration. */
export function normalPlan(action: string): PlanStep[] {
  return [
    { status: "running", offsetUs: 0 },
    { status: "finished", offsetUs: normalDurationUs(action) },
  ];
}

/** The policy of projects outside the traffic generator: everything succeeds on time. */
export const normalPolicy: PlanPolicy = { planFor: (_project, action) => normalPlan(action) };
