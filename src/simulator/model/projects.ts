import type { EndpointType } from "../../contract/index.js";
import type { ComputeConfig } from "./compute-rules.js";
import type { ModelContext } from "./context.js";
import type { BranchState, EndpointState, PlanName, ProjectState } from "./state.js";

export interface NewProject {
  readonly plan: PlanName;
  /** Number of branches, the primary one included (at least 1). */
  readonly branches: number;
  readonly availabilityChecks: boolean;
  readonly generated?: boolean;
  /** Expected number of operations, to size the log up front (bulk seeding). */
  readonly expectedOperations?: number;
}

/** A fixed 0.25 CU compute with the default auto-suspend delay: what every plan starts with. */
export const DEFAULT_COMPUTE: ComputeConfig = {
  minCu: 0.25,
  maxCu: 0.25,
  suspendTimeoutSeconds: 0,
};

/**
 * Creates a project as the service does: a `create_timeline` operation for the project and
 * its primary branch, the primary branch's read-write endpoint whose `start_compute` waits in
 * `scheduling` until the timeline exists, and a `create_branch` operation per other branch.
 */
export function createProject(ctx: ModelContext, spec: NewProject): ProjectState {
  const id = ctx.ids.projectId();
  const project: ProjectState = {
    id,
    name: id,
    plan: spec.plan,
    createdUs: ctx.scheduler.nowUs,
    availabilityChecks: spec.availabilityChecks,
    generated: spec.generated ?? false,
    branches: [],
    endpoints: [],
    log: ctx.world.newLog(spec.expectedOperations),
  };
  ctx.world.addProject(project);
  const primary = addBranch(ctx, project, true);
  const endpoint = addEndpoint(ctx, project, primary, "read_write", DEFAULT_COMPUTE);
  ctx.lifecycle.enqueue(endpoint, { branch: primary, action: "create_timeline" });
  ctx.lifecycle.enqueue(endpoint, ctx.lifecycle.startCompute(endpoint));
  for (let i = 1; i < spec.branches; i++) {
    const branch = addBranch(ctx, project, false);
    ctx.runner.start(project, { branch, action: "create_branch" });
  }
  return project;
}

/**
 * Creates a branch the way seed 3.1 describes a branch creation request: `create_branch`
 * running and, when the branch gets a compute, its `start_compute` in `scheduling`.
 */
export function createBranch(
  ctx: ModelContext,
  project: ProjectState,
  withEndpoint: boolean,
): BranchState {
  const branch = addBranch(ctx, project, false);
  if (!withEndpoint) {
    ctx.runner.start(project, { branch, action: "create_branch" });
    return branch;
  }
  const endpoint = addEndpoint(ctx, project, branch, "read_write", DEFAULT_COMPUTE);
  ctx.lifecycle.enqueue(endpoint, { branch, action: "create_branch" });
  ctx.lifecycle.enqueue(endpoint, ctx.lifecycle.startCompute(endpoint));
  return branch;
}

export function addBranch(
  ctx: ModelContext,
  project: ProjectState,
  primary: boolean,
  createdUs = ctx.scheduler.nowUs,
): BranchState {
  const branch: BranchState = {
    index: project.branches.length,
    id: ctx.ids.branchId(),
    primary,
    createdUs,
  };
  project.branches.push(branch);
  return branch;
}

/** A new endpoint in state `init`; the caller queues the operation that starts it. */
export function addEndpoint(
  ctx: ModelContext,
  project: ProjectState,
  branch: BranchState,
  type: EndpointType,
  config: ComputeConfig,
  createdUs = ctx.scheduler.nowUs,
): EndpointState {
  const now = createdUs;
  const endpoint: EndpointState = {
    index: project.endpoints.length,
    id: ctx.ids.endpointId(),
    project,
    type,
    createdUs: now,
    branch,
    minCu: config.minCu,
    maxCu: config.maxCu,
    suspendTimeoutSeconds: config.suspendTimeoutSeconds,
    currentState: "init",
    chain: undefined,
    holds: 0,
    lastActivityUs: now,
    lastActiveUs: undefined,
    startedAtUs: undefined,
    suspendedAtUs: undefined,
    updatedUs: now,
    deleted: false,
    suspendTimer: 0,
    suspendWhenReleased: false,
  };
  project.endpoints.push(endpoint);
  ctx.world.addEndpoint(endpoint);
  return endpoint;
}
