import type { CreateBranchRequest, Endpoint, Operation } from "../../contract/index.js";
import { ApiError, locked, notFound } from "../errors.js";
import type { ModelContext } from "./context.js";
import { newEndpointSpec } from "./endpoint-service.js";
import { branchView, type BranchView, type CreatedResources } from "./project-views.js";
import { createBranch } from "./projects.js";
import { endpointsOnBranch, findBranch, type BranchState, type ProjectState } from "./state.js";
import { endpointView, operationView } from "./views.js";

/** The answer to a deletion of a branch that was deleted before (real API: 204). */
export const BRANCH_ALREADY_DELETED = Symbol("branch already deleted");

/**
 * `POST /projects/{project_id}/branches` → 201: the real `CreatedBranch` (no roles or databases).
 */
export interface CreatedBranchView extends CreatedResources {
  readonly branch: BranchView;
}

/** A refusal the real API gives for a branch that must stay (the default one, a parent). */
const undeletable = (message: string): ApiError =>
  new ApiError(422, "unprocessable_entity", message);

/** The branch calls of the API: list, get, create, delete, and a branch's endpoints. */
export class BranchService {
  constructor(private readonly ctx: ModelContext) {}

  /** Live branches in creation order (the primary first). */
  list(projectId: string): { branches: BranchView[]; annotations: Record<string, never> } {
    const project = this.project(projectId);
    return {
      branches: project.branches.filter((b) => !b.deleted).map((b) => branchView(project, b)),
      annotations: {},
    };
  }

  get(projectId: string, branchId: string): { branch: BranchView } {
    const project = this.project(projectId);
    return { branch: branchView(project, this.branch(project, branchId)) };
  }

  endpoints(projectId: string, branchId: string): { endpoints: Endpoint[] } {
    const project = this.project(projectId);
    const branch = this.branch(project, branchId);
    return {
      endpoints: endpointsOnBranch(project, branch).map((e) => endpointView(e, this.ctx.lifecycle)),
    };
  }

  /**
   * Seed 3.1: `create_branch` running and, with an endpoint requested, its `start_compute` in
   * `scheduling` until the branch exists. Without `parent_id` the branch comes from the primary.
   */
  create(projectId: string, request: CreateBranchRequest): CreatedBranchView {
    const project = this.project(projectId);
    const parentId = request?.branch?.parent_id;
    const parent = parentId === undefined ? undefined : this.branch(project, parentId);
    const requested = request?.endpoints?.[0];
    const endpoint = requested === undefined ? undefined : newEndpointSpec(project.plan, requested);
    const name = request?.branch?.name;
    const created = createBranch(this.ctx, project, {
      ...(parent === undefined ? {} : { parent }),
      ...(name === undefined ? {} : { name }),
      ...(endpoint === undefined ? {} : { endpoint }),
    });
    return {
      branch: branchView(project, created.branch),
      endpoints:
        created.endpoint === undefined ? [] : [endpointView(created.endpoint, this.ctx.lifecycle)],
      operations: created.operations.map((i) => operationView(project, i)),
      roles: [],
      databases: [],
    };
  }

  /**
   * Deletes a branch and its endpoints (they go at once, as an endpoint deletion does) with a
   * `delete_timeline` operation. The primary branch and a branch with live children stay
   * (422); an endpoint held by an operation makes it wait (423).
   */
  delete(
    projectId: string,
    branchId: string,
  ): { branch: BranchView; operations: Operation[] } | typeof BRANCH_ALREADY_DELETED {
    const project = this.project(projectId);
    const branch = project.branches.find((b) => b.id === branchId);
    if (branch === undefined) throw notFound(`branch ${branchId} not found`);
    if (branch.deleted) return BRANCH_ALREADY_DELETED;
    if (branch.primary) {
      throw undeletable(`branch ${branch.id} is the project's default branch`);
    }
    if (project.branches.some((b) => !b.deleted && b.parent === branch)) {
      throw undeletable(`branch ${branch.id} has child branches: delete them first`);
    }
    const endpoints = endpointsOnBranch(project, branch);
    if (endpoints.some((e) => this.ctx.lifecycle.isLocked(e))) {
      throw locked(`branch ${branch.id} has an endpoint locked by an operation in progress`);
    }
    for (const endpoint of endpoints) this.ctx.world.deleteEndpoint(endpoint);
    const now = this.ctx.scheduler.nowUs;
    branch.deleted = true;
    branch.updatedUs = now;
    const index = this.ctx.runner.start(project, { branch, action: "delete_timeline" });
    return { branch: branchView(project, branch), operations: [operationView(project, index)] };
  }

  private project(projectId: string): ProjectState {
    const project = this.ctx.world.project(projectId);
    if (project === undefined) throw notFound(`project ${projectId} not found`);
    return project;
  }

  private branch(project: ProjectState, branchId: string): BranchState {
    const branch = findBranch(project, branchId);
    if (branch === undefined) throw notFound(`branch ${branchId} not found`);
    return branch;
  }
}
