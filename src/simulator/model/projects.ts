import type { EndpointType } from "../../contract/index.js";
import { DEFAULT_USER_ID, type ProjectOwnership } from "./accounts.js";
import type { ComputeConfig } from "./compute-rules.js";
import type { ModelContext } from "./context.js";
import { DEFAULT_ENDPOINT_SETTINGS } from "./endpoint-settings.js";
import type { OperationSpec } from "./operation-runner.js";
import { DEFAULT_REGION, type Region } from "./regions.js";
import type {
  BranchState,
  EndpointSettings,
  EndpointState,
  PlanName,
  ProjectState,
} from "./state.js";

export interface NewProject {
  readonly plan: PlanName;
  /** Number of branches, the primary one included (at least 1). */
  readonly branches: number;
  readonly availabilityChecks: boolean;
  readonly generated?: boolean;
  /** Expected number of operations, to size the log up front (bulk seeding). */
  readonly expectedOperations?: number;
  /** Default: a personal project of the default user. */
  readonly ownership?: ProjectOwnership;
  /** Default: the default region (`aws-us-east-2`). */
  readonly region?: Region;
  /** Default: the project's id. */
  readonly name?: string;
  /** Default 17. */
  readonly pgVersion?: number;
  /** Default `main`. */
  readonly primaryBranchName?: string;
  /** The primary branch's endpoint (default: a fixed 0.25 CU compute, default settings). */
  readonly endpoint?: NewEndpoint;
}

/** A new endpoint's configuration. */
export interface NewEndpoint {
  readonly type: EndpointType;
  readonly config: ComputeConfig;
  readonly settings: EndpointSettings;
}

/** A fixed 0.25 CU compute with the default auto-suspend delay: what every plan starts with. */
export const DEFAULT_COMPUTE: ComputeConfig = {
  minCu: 0.25,
  maxCu: 0.25,
  suspendTimeoutSeconds: 0,
};

/** The primary endpoint of a project created without one specified. */
export const DEFAULT_ENDPOINT: NewEndpoint = {
  type: "read_write",
  config: DEFAULT_COMPUTE,
  settings: DEFAULT_ENDPOINT_SETTINGS,
};

export const DEFAULT_OWNERSHIP: ProjectOwnership = { ownerId: DEFAULT_USER_ID, orgId: undefined };

/**
 * Creates a project as the service does: a `create_timeline` operation for the project and
 * its primary branch, the primary branch's read-write endpoint whose `start_compute` waits in
 * `scheduling` until the timeline exists, and a `create_branch` operation per other branch.
 */
export function createProject(ctx: ModelContext, spec: NewProject): ProjectState {
  const id = ctx.ids.projectId();
  const ownership = spec.ownership ?? DEFAULT_OWNERSHIP;
  const project: ProjectState = {
    id,
    name: spec.name ?? id,
    plan: spec.plan,
    createdUs: ctx.scheduler.nowUs,
    ownerId: ownership.ownerId,
    orgId: ownership.orgId,
    region: spec.region ?? DEFAULT_REGION,
    pgVersion: spec.pgVersion ?? 17,
    availabilityChecks: spec.availabilityChecks,
    generated: spec.generated ?? false,
    branches: [],
    endpoints: [],
    log: ctx.world.newLog(spec.expectedOperations),
    deleted: false,
  };
  ctx.world.addProject(project);
  const primary = addBranch(ctx, project, {
    primary: true,
    name: spec.primaryBranchName ?? "main",
    state: "init",
  });
  const endpoint = addEndpoint(ctx, project, primary, spec.endpoint ?? DEFAULT_ENDPOINT);
  ctx.lifecycle.enqueue(endpoint, creation(ctx, primary, "create_timeline"));
  if (!endpoint.settings.disabled) {
    ctx.lifecycle.enqueue(endpoint, ctx.lifecycle.startCompute(endpoint));
  }
  for (let i = 1; i < spec.branches; i++) {
    const branch = addBranch(ctx, project, { parent: primary, state: "init" });
    ctx.runner.start(project, creation(ctx, branch, "create_branch"));
  }
  return project;
}

export interface NewBranch {
  /** Default: the primary branch. */
  readonly parent?: BranchState;
  /** Default: the branch's id. */
  readonly name?: string;
  /** The branch's compute, if any. */
  readonly endpoint?: NewEndpoint;
}

/**
 * Creates a branch the way seed 3.1 describes a branch creation request: `create_branch`
 * running and, when the branch gets a compute, its `start_compute` in `scheduling`. Returns
 * the branch, its endpoint (if any) and the log indices of the operations started.
 */
export function createBranch(
  ctx: ModelContext,
  project: ProjectState,
  spec: NewBranch,
): { branch: BranchState; endpoint: EndpointState | undefined; operations: number[] } {
  const branch = addBranch(ctx, project, {
    parent: spec.parent ?? project.branches[0],
    ...(spec.name === undefined ? {} : { name: spec.name }),
    state: "init",
  });
  const create = creation(ctx, branch, "create_branch");
  if (spec.endpoint === undefined) {
    return { branch, endpoint: undefined, operations: [ctx.runner.start(project, create)] };
  }
  const endpoint = addEndpoint(ctx, project, branch, spec.endpoint);
  const operations = [ctx.lifecycle.enqueue(endpoint, create)];
  if (!endpoint.settings.disabled) {
    operations.push(ctx.lifecycle.enqueue(endpoint, ctx.lifecycle.startCompute(endpoint)));
  }
  return { branch, endpoint, operations };
}

/** The operation creating a branch (or a project's timeline): the branch is ready once it ends. */
function creation(ctx: ModelContext, branch: BranchState, action: string): OperationSpec {
  return {
    branch,
    action,
    onEnd: () => {
      const now = ctx.scheduler.nowUs;
      branch.state = "ready";
      branch.stateChangedUs = now;
      branch.updatedUs = now;
    },
  };
}

export interface BranchOptions {
  readonly primary?: boolean;
  readonly parent?: BranchState | undefined;
  readonly name?: string;
  /** Default `ready` (bulk seeding: a branch with a finished history). */
  readonly state?: BranchState["state"];
  readonly createdUs?: number;
}

export function addBranch(
  ctx: ModelContext,
  project: ProjectState,
  options: BranchOptions = {},
): BranchState {
  const id = ctx.ids.branchId();
  const createdUs = options.createdUs ?? ctx.scheduler.nowUs;
  const branch: BranchState = {
    index: project.branches.length,
    id,
    primary: options.primary ?? false,
    name: options.name ?? id,
    parent: options.parent,
    createdUs,
    state: options.state ?? "ready",
    stateChangedUs: createdUs,
    updatedUs: createdUs,
    deleted: false,
  };
  project.branches.push(branch);
  return branch;
}

/** A new endpoint in state `init`; the caller queues the operation that starts it. */
export function addEndpoint(
  ctx: ModelContext,
  project: ProjectState,
  branch: BranchState,
  spec: NewEndpoint,
  createdUs = ctx.scheduler.nowUs,
): EndpointState {
  const now = createdUs;
  const endpoint: EndpointState = {
    index: project.endpoints.length,
    id: ctx.ids.endpointId(),
    project,
    type: spec.type,
    createdUs: now,
    branch,
    minCu: spec.config.minCu,
    maxCu: spec.config.maxCu,
    suspendTimeoutSeconds: spec.config.suspendTimeoutSeconds,
    settings: spec.settings,
    // A disabled compute is never started: it waits idle until enabled.
    currentState: spec.settings.disabled ? "idle" : "init",
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
    host: undefined,
  };
  project.endpoints.push(endpoint);
  ctx.world.addEndpoint(endpoint);
  return endpoint;
}
