import type { EndpointType } from "../../contract/index.js";
import { Interner } from "./interner.js";
import type { OperationChain } from "./operation-chain.js";
import { OperationLog } from "./operation-log.js";

export type PlanName = "free" | "paid";
export const PLAN_NAMES = ["free", "paid"] as const;

/** The states an endpoint can be in (`current_state`); `pending_state` is derived. */
export type ComputeState = "init" | "active" | "idle";

export interface ProjectState {
  readonly id: string;
  readonly name: string;
  readonly plan: PlanName;
  readonly createdUs: number;
  readonly availabilityChecks: boolean;
  /** Created by the traffic generator: its operations follow the traffic's outcome mix. */
  readonly generated: boolean;
  readonly branches: BranchState[];
  /** Every endpoint ever created, deleted ones included: operation records point into it. */
  readonly endpoints: EndpointState[];
  readonly log: OperationLog;
}

export interface BranchState {
  /** Position in the project's branch table (what the operation log stores). */
  readonly index: number;
  readonly id: string;
  readonly primary: boolean;
  readonly createdUs: number;
}

export interface EndpointState {
  /** Position in the project's endpoint table (what the operation log stores). */
  readonly index: number;
  readonly id: string;
  readonly project: ProjectState;
  readonly type: EndpointType;
  readonly createdUs: number;
  branch: BranchState;
  minCu: number;
  maxCu: number;
  /** As set by the client: -1 never, 0 the default (300 s), else seconds. */
  suspendTimeoutSeconds: number;
  currentState: ComputeState;
  /** The operations queued on the endpoint, in order; undefined when none is in progress. */
  chain: OperationChain | undefined;
  /** Open operations that hold the endpoint (see status-rules `holdsEndpoint`). */
  holds: number;
  /** Last instant something used the compute; auto-suspend counts from here. */
  lastActivityUs: number;
  lastActiveUs: number | undefined;
  startedAtUs: number | undefined;
  suspendedAtUs: number | undefined;
  updatedUs: number;
  deleted: boolean;
  /** Generation of the armed auto-suspend timer; bumping it disarms the timer. */
  suspendTimer: number;
  /** The timer came due while the endpoint was held: re-arm it once released. */
  suspendWhenReleased: boolean;
}

/** Every project, branch and endpoint of one simulator, and the interned strings of its logs. */
export class World {
  private readonly projectsById = new Map<string, ProjectState>();
  private readonly projectOrder: ProjectState[] = [];
  private readonly projectPosition = new Map<string, number>();
  private readonly endpointsById = new Map<string, EndpointState>();
  private readonly actions = new Interner();
  private readonly statuses = new Interner();

  newLog(initialCapacity?: number): OperationLog {
    return new OperationLog(this.actions, this.statuses, initialCapacity);
  }

  addProject(project: ProjectState): void {
    this.projectPosition.set(project.id, this.projectOrder.length);
    this.projectOrder.push(project);
    this.projectsById.set(project.id, project);
  }

  project(id: string): ProjectState | undefined {
    return this.projectsById.get(id);
  }

  /** Projects in creation order. */
  get projects(): readonly ProjectState[] {
    return this.projectOrder;
  }

  /** Position of a project in creation order (the projects list's cursor), or undefined. */
  projectPositionOf(id: string): number | undefined {
    return this.projectPosition.get(id);
  }

  addEndpoint(endpoint: EndpointState): void {
    this.endpointsById.set(endpoint.id, endpoint);
  }

  /** A live (not deleted) endpoint by id, in any project. */
  endpoint(id: string): EndpointState | undefined {
    const endpoint = this.endpointsById.get(id);
    return endpoint?.deleted === false ? endpoint : undefined;
  }
}

export function findBranch(project: ProjectState, id: string): BranchState | undefined {
  return project.branches.find((b) => b.id === id);
}

export function liveEndpoints(project: ProjectState): EndpointState[] {
  return project.endpoints.filter((e) => !e.deleted);
}

export function endpointsOnBranch(project: ProjectState, branch: BranchState): EndpointState[] {
  return project.endpoints.filter((e) => !e.deleted && e.branch === branch);
}
