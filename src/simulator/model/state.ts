import type { EndpointType } from "../../contract/index.js";
import { projectAccount } from "./accounts.js";
import { Interner } from "./interner.js";
import type { OperationChain } from "./operation-chain.js";
import { OperationLog } from "./operation-log.js";
import type { Region } from "./regions.js";

export type PlanName = "free" | "paid";
export const PLAN_NAMES = ["free", "paid"] as const;

/** The states an endpoint can be in (`current_state`); `pending_state` is derived. */
export type ComputeState = "init" | "active" | "idle";

export interface ProjectState {
  readonly id: string;
  readonly name: string;
  readonly plan: PlanName;
  readonly createdUs: number;
  /** The user who owns a personal project; for a project in an organisation, the org's id. */
  readonly ownerId: string;
  /** The organisation the project belongs to; undefined for a personal project. */
  readonly orgId: string | undefined;
  /** Where the project was created; its endpoints are there too. */
  readonly region: Region;
  readonly pgVersion: number;
  readonly availabilityChecks: boolean;
  /** Created by the traffic generator: its operations follow the traffic's outcome mix. */
  readonly generated: boolean;
  readonly branches: BranchState[];
  /** Every endpoint ever created, deleted ones included: operation records point into it. */
  readonly endpoints: EndpointState[];
  readonly log: OperationLog;
  /**
   * Deleted through the API: it answers 404 and is no longer listed; its log stays readable by
   * `/_sim/truth`.
   */
  deleted: boolean;
}

/** `init` while the operation creating the branch runs, then `ready`. */
export type BranchReadiness = "init" | "ready";

export interface BranchState {
  /** Position in the project's branch table (what the operation log stores). */
  readonly index: number;
  readonly id: string;
  readonly primary: boolean;
  readonly name: string;
  /** The branch it was created from; undefined for the primary branch. */
  readonly parent: BranchState | undefined;
  readonly createdUs: number;
  state: BranchReadiness;
  stateChangedUs: number;
  updatedUs: number;
  deleted: boolean;
}

/** Endpoint fields stored as the client set them, without effect on the compute but `disabled`. */
export interface EndpointSettings {
  readonly name: string | undefined;
  /** A disabled compute is not started: starts and connections are refused. */
  readonly disabled: boolean;
  readonly poolerEnabled: boolean;
  readonly poolerMode: "transaction";
  readonly pgSettings: Readonly<Record<string, string>>;
  readonly provisioner: string;
  readonly passwordlessAccess: boolean;
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
  /** What a client may set besides sizes and auto-suspend (see endpoint-settings.ts). */
  settings: EndpointSettings;
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
  /**
   * The address clients connect to when the simulator hosts computes (`computes/`: a
   * loopback address of its own); undefined: the region's host name, which resolves nowhere.
   */
  host: string | undefined;
}

/**
 * What a compute host (`computes/`) hears of the model, and the one thing the model asks it:
 * whether a client is busy on the compute, which holds off an auto-suspend that comes due.
 */
export interface ComputeEvents {
  /** A new endpoint, in state `init` or (disabled, bulk-seeded) `idle`. */
  created(endpoint: EndpointState): void;
  /** Its start_compute finished: the compute runs (a fresh start: statistics reset). */
  started(endpoint: EndpointState): void;
  /** Its suspend_compute finished: the compute stopped (its client connections drop). */
  suspended(endpoint: EndpointState): void;
  /** Deleted for good. */
  deleted(endpoint: EndpointState): void;
  /** True while a client runs a statement or holds a transaction open on the compute. */
  busy(endpoint: EndpointState): boolean;
}

/** Every project, branch and endpoint of one simulator, and the interned strings of its logs. */
export class World {
  private readonly projectsById = new Map<string, ProjectState>();
  private readonly projectOrder: ProjectState[] = [];
  private readonly projectPosition = new Map<string, number>();
  private readonly endpointsById = new Map<string, EndpointState>();
  /** Per account (see accounts.ts), its projects in creation order, deleted ones included. */
  private readonly byAccount = new Map<string, ProjectState[]>();
  /** Position of each project in its account's list. */
  private readonly accountPosition = new Map<string, number>();
  private readonly actions = new Interner();
  private readonly statuses = new Interner();
  /** The compute host, when the simulator runs one (see `ControlPlane.attachComputes`). */
  computeEvents: ComputeEvents | undefined;

  newLog(initialCapacity?: number): OperationLog {
    return new OperationLog(this.actions, this.statuses, initialCapacity);
  }

  addProject(project: ProjectState): void {
    this.projectPosition.set(project.id, this.projectOrder.length);
    this.projectOrder.push(project);
    this.projectsById.set(project.id, project);
    const account = projectAccount(project);
    let list = this.byAccount.get(account);
    if (list === undefined) {
      list = [];
      this.byAccount.set(account, list);
    }
    this.accountPosition.set(project.id, list.length);
    list.push(project);
  }

  /** A live (not deleted) project by id. */
  project(id: string): ProjectState | undefined {
    const project = this.projectsById.get(id);
    return project?.deleted === false ? project : undefined;
  }

  /** A project by id, deleted ones included (their logs stay readable by `/_sim/truth`). */
  anyProject(id: string): ProjectState | undefined {
    return this.projectsById.get(id);
  }

  /** An account's projects in creation order, deleted ones included (the caller skips them). */
  accountProjects(account: string): readonly ProjectState[] {
    return this.byAccount.get(account) ?? [];
  }

  /** Position of a project in its account's list, or undefined. */
  accountPositionOf(id: string): number | undefined {
    return this.accountPosition.get(id);
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
    this.computeEvents?.created(endpoint);
  }

  /** An endpoint removed for good: later calls on it answer 404, its auto-suspend is disarmed. */
  deleteEndpoint(endpoint: EndpointState): void {
    endpoint.deleted = true;
    endpoint.suspendTimer++;
    this.computeEvents?.deleted(endpoint);
  }

  /** A live (not deleted) endpoint by id, in any project. */
  endpoint(id: string): EndpointState | undefined {
    const endpoint = this.endpointsById.get(id);
    return endpoint?.deleted === false ? endpoint : undefined;
  }
}

/** A live (not deleted) branch of the project by id. */
export function findBranch(project: ProjectState, id: string): BranchState | undefined {
  return project.branches.find((b) => b.id === id && !b.deleted);
}

export function liveEndpoints(project: ProjectState): EndpointState[] {
  return project.endpoints.filter((e) => !e.deleted);
}

export function endpointsOnBranch(project: ProjectState, branch: BranchState): EndpointState[] {
  return project.endpoints.filter((e) => !e.deleted && e.branch === branch);
}
