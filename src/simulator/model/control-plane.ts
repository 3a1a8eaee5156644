import type { OperationsPage } from "../../contract/index.js";
import { IdFactory } from "../ids.js";
import type { SeededRandom } from "../random.js";
import type { Scheduler } from "../scheduler.js";
import { Accounts } from "./accounts.js";
import { AvailabilityChecker } from "./availability-checker.js";
import { BranchService } from "./branch-service.js";
import { seedBulk, type BulkSeedOptions, type BulkSeedResult } from "./bulk-seed.js";
import type { ModelContext } from "./context.js";
import { EndpointLifecycle } from "./endpoint-lifecycle.js";
import { EndpointService } from "./endpoint-service.js";
import { OperationRunner, type FailureHook } from "./operation-runner.js";
import { getOperation, listOperations, operationTruth } from "./operation-queries.js";
import { ProjectService } from "./project-service.js";
import { createBranch, createProject, type NewBranch, type NewProject } from "./projects.js";
import { scriptOperation, type ScriptedOperation } from "./scripted-operations.js";
import {
  liveEndpoints,
  World,
  type BranchState,
  type ComputeEvents,
  type PlanName,
  type ProjectState,
} from "./state.js";
import type { TruthOperation } from "./views.js";

export interface ControlPlaneOptions {
  readonly scheduler: Scheduler;
  /** Root of the seeded streams; the control plane forks its own from it. */
  readonly random: SeededRandom;
  /** Period of availability checks; 0 switches the checker off. */
  readonly availabilityCheckSeconds: number;
  /**
   * Asked once for every operation created (bulk seeding aside): the offset of its shown
   * `created_at` in microseconds, or undefined for a true one (the `misdated` fault).
   */
  readonly misdate?: () => number | undefined;
  /**
   * Asked for every operation whose course the model decides (not scripted or skipped ones),
   * as it starts running: an error text to fail it with, or undefined (the
   * `failed_operations` fault).
   */
  readonly failOperation?: FailureHook;
}

/** How the answer of an operations call is misshown (fault injection). */
export interface OperationFaults {
  /** `overlap`: with a cursor, the page starts one record earlier. */
  readonly overlap?: boolean;
  /** `foreign_project`: every record claims another project's id. */
  readonly foreignProject?: boolean;
}

/** The id a `foreign_project` answer claims when the simulator has no other project. */
export const STRAY_PROJECT_ID = "stray-project-000000";

export type CreateProjectInput = Omit<NewProject, "availabilityChecks" | "plan"> & {
  readonly plan: PlanName;
  /** Default true: follow the simulator's availability checker (if it runs at all). */
  readonly availabilityChecks?: boolean;
};

/**
 * The simulated control plane: projects, branches, endpoints and their operation logs, and
 * every call the API and the `/_sim` interface make on them. It has no notion of HTTP.
 */
export class ControlPlane {
  readonly world = new World();
  readonly scheduler: Scheduler;
  readonly runner: OperationRunner;
  readonly lifecycle: EndpointLifecycle;
  readonly endpoints: EndpointService;
  readonly accounts = new Accounts();
  readonly projects: ProjectService;
  readonly branches: BranchService;
  private readonly ctx: ModelContext;
  private readonly availability: AvailabilityChecker;
  private readonly bulkRandom: SeededRandom;

  constructor(options: ControlPlaneOptions) {
    this.scheduler = options.scheduler;
    const ids = new IdFactory(options.random.fork(1));
    this.runner = new OperationRunner(
      this.scheduler,
      ids,
      (endpoint) => {
        this.lifecycle.released(endpoint);
      },
      options.misdate ?? (() => undefined),
      options.failOperation ?? (() => undefined),
    );
    this.lifecycle = new EndpointLifecycle(this.runner, this.scheduler, this.world);
    this.ctx = {
      world: this.world,
      scheduler: this.scheduler,
      ids,
      runner: this.runner,
      lifecycle: this.lifecycle,
    };
    this.endpoints = new EndpointService(this.ctx);
    this.projects = new ProjectService(this.ctx, this.accounts, (spec) => this.createProject(spec));
    this.branches = new BranchService(this.ctx);
    this.availability = new AvailabilityChecker(
      this.ctx,
      options.availabilityCheckSeconds,
      options.random.fork(2),
    );
    this.bulkRandom = options.random.fork(3);
  }

  /**
   * Hands every endpoint's compute to a host (`computes/`): it hears of each endpoint created
   * (those that exist already at once), started, suspended and deleted.
   */
  attachComputes(events: ComputeEvents): void {
    this.world.computeEvents = events;
    for (const project of this.world.projects) {
      for (const endpoint of liveEndpoints(project)) events.created(endpoint);
    }
  }

  createProject(input: CreateProjectInput): ProjectState {
    const project = createProject(this.ctx, {
      ...input,
      availabilityChecks: input.availabilityChecks ?? true,
    });
    this.availability.watch(project);
    return project;
  }

  createBranch(project: ProjectState, spec: NewBranch = {}): BranchState {
    return createBranch(this.ctx, project, spec).branch;
  }

  /** Creates an organisation; its id is generated unless given (`org-<words>-<digits>`). */
  createOrganization(spec: {
    readonly id?: string | undefined;
    readonly name: string;
    readonly members?: readonly string[] | undefined;
  }): ReturnType<Accounts["addOrganization"]> {
    const id = spec.id ?? this.ctx.ids.organizationId();
    return this.accounts.addOrganization(
      id,
      spec.name,
      spec.members ?? [],
      this.ctx.scheduler.nowUs,
    );
  }

  listOperations(
    projectId: string,
    beforeUs: number | undefined,
    limit: number,
    faults: OperationFaults = {},
  ): OperationsPage {
    return listOperations(this.world, projectId, beforeUs, limit, this.scheduler.nowUs, {
      ...(faults.overlap === true ? { overlap: true } : {}),
      ...(faults.foreignProject === true ? { projectId: this.foreignProjectId(projectId) } : {}),
    });
  }

  getOperation(
    projectId: string,
    operationId: string,
    faults: OperationFaults = {},
  ): ReturnType<typeof getOperation> {
    return getOperation(
      this.world,
      projectId,
      operationId,
      faults.foreignProject === true ? { projectId: this.foreignProjectId(projectId) } : {},
    );
  }

  /**
   * The id a `foreign_project` answer claims for a project's records: the next project in
   * creation order (the first after the last), or `STRAY_PROJECT_ID` when there is no other.
   */
  foreignProjectId(projectId: string): string {
    const all = this.world.projects;
    const position = this.world.projectPositionOf(projectId) ?? -1;
    const other = all[(position + 1) % all.length];
    return other === undefined || other.id === projectId ? STRAY_PROJECT_ID : other.id;
  }

  truth(projectId: string): { operations: TruthOperation[] } {
    return operationTruth(this.world, projectId);
  }

  scriptOperation(request: ScriptedOperation): ReturnType<typeof scriptOperation> {
    return scriptOperation(this.ctx, request);
  }

  seedBulk(options: BulkSeedOptions): BulkSeedResult {
    return seedBulk(this.ctx, this.bulkRandom, options, (project) => {
      this.availability.watch(project);
    });
  }
}
