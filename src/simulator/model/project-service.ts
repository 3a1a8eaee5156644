import type { CreateProjectRequest, Operation, Pagination } from "../../contract/index.js";
import { badRequest, notFound } from "../errors.js";
import { toIsoSeconds } from "../time.js";
import type { Accounts, KeyOwner } from "./accounts.js";
import type { ModelContext } from "./context.js";
import { newEndpointSpec } from "./endpoint-service.js";
import {
  branchView,
  projectListItemView,
  projectView,
  type BranchView,
  type CreatedResources,
  type ProjectListItemView,
  type ProjectView,
} from "./project-views.js";
import type { NewProject } from "./projects.js";
import { regionFor } from "./regions.js";
import { liveEndpoints, type ProjectState } from "./state.js";
import { endpointView, operationView } from "./views.js";

/**
 * `GET /projects`. The real response also carries `applications` and `integrations` maps
 * (required by its schema); the simulator has none of either, so both are empty.
 */
export interface ProjectsPageView {
  readonly projects: ProjectListItemView[];
  readonly pagination?: Pagination;
  readonly applications: Record<string, never>;
  readonly integrations: Record<string, never>;
}

/** `POST /projects` → 201: the real `CreatedProject`. */
export interface CreatedProjectView extends CreatedResources {
  readonly project: ProjectView;
  readonly connection_uris: readonly ConnectionUri[];
  readonly branch: BranchView;
}

interface ConnectionUri {
  readonly connection_uri: string;
  readonly connection_parameters: {
    readonly database: string;
    readonly password: string;
    readonly role: string;
    readonly host: string;
    readonly pooler_host: string;
  };
}

/** The database and its owner role a project starts with unless the request names others. */
const DEFAULT_DATABASE = "neondb";
/** Nothing resolves under the simulator's hosts: the password protects nothing. */
const SIM_PASSWORD = "sim-password";
/** Projects created through the API are on the paid plan (the plan is a simulator concept). */
const API_PROJECT_PLAN = "paid";

/** The project calls of the API: list, get, create, delete. */
export class ProjectService {
  constructor(
    private readonly ctx: ModelContext,
    private readonly accounts: Accounts,
    /** Creates a project the way every other one is created (it also joins the checker). */
    private readonly createProject: (spec: NewProject) => ProjectState,
  ) {}

  /**
   * The projects of the account a key lists (see `Accounts.listedAccount`), in creation
   * order. The cursor is the id of the last project of the previous page (deleted since or not);
   * a page lists the projects after it. A page costs its projects plus those deleted among
   * them, whatever other accounts hold.
   */
  list(
    owner: KeyOwner,
    orgId: string | undefined,
    cursor: string | undefined,
    limit: number,
  ): ProjectsPageView {
    const account = this.accounts.listedAccount(owner, orgId);
    const all = this.ctx.world.accountProjects(account);
    let start = 0;
    if (cursor !== undefined) {
      const position = this.ctx.world.accountPositionOf(cursor);
      if (position === undefined || all[position]?.id !== cursor) {
        throw badRequest("cursor does not name a project of this list");
      }
      start = position + 1;
    }
    const page: ProjectState[] = [];
    for (let i = start; i < all.length && page.length < limit; i++) {
      const project = all[i];
      if (project !== undefined && !project.deleted) page.push(project);
    }
    const last = page.at(-1)?.id ?? cursor;
    return {
      projects: page.map(projectListItemView),
      ...(last === undefined ? {} : { pagination: { cursor: last } }),
      applications: {},
      integrations: {},
    };
  }

  /** Whether a key sees a project (false for an unknown one too). */
  visible(owner: KeyOwner, projectId: string): boolean {
    const project = this.ctx.world.project(projectId);
    return project !== undefined && this.accounts.canSee(owner, project);
  }

  get(projectId: string): { project: ProjectView } {
    return { project: projectView(this.requireProject(projectId), this.ctx.scheduler.nowUs) };
  }

  /**
   * Creates a project with its primary branch and read-write endpoint (`create_timeline`
   * running, then `start_compute`), in the region `region_id` names (default `aws-us-east-2`;
   * 400 for one the simulator does not serve). `org_id` comes from the body or the query (both:
   * they must agree); see `Accounts.placement` for where the project goes.
   */
  create(
    owner: KeyOwner,
    request: CreateProjectRequest,
    queryOrgId: string | undefined,
  ): CreatedProjectView {
    const body = request.project;
    if (body.org_id !== undefined && queryOrgId !== undefined && body.org_id !== queryOrgId) {
      throw badRequest("org_id: the body and the query name different organizations");
    }
    const region = regionFor(body.region_id);
    const ownership = this.accounts.placement(owner, body.org_id ?? queryOrgId);
    const defaults = body.default_endpoint_settings ?? {};
    const endpointSpec = newEndpointSpec(API_PROJECT_PLAN, {
      type: "read_write",
      ...defaults,
      ...(body.provisioner === undefined ? {} : { provisioner: body.provisioner }),
    });
    const project = this.createProject({
      plan: API_PROJECT_PLAN,
      branches: 1,
      availabilityChecks: true,
      ownership,
      region,
      ...(body.name === undefined ? {} : { name: body.name }),
      ...(body.pg_version === undefined ? {} : { pgVersion: body.pg_version }),
      ...(body.branch?.name === undefined ? {} : { primaryBranchName: body.branch.name }),
      endpoint: endpointSpec,
    });
    const database = body.branch?.database_name ?? DEFAULT_DATABASE;
    const role = body.branch?.role_name ?? `${database}_owner`;
    return this.creationAnswer(project, database, role);
  }

  /**
   * Deletes a project: its endpoints go at once, a `delete_tenant` operation runs, and the
   * project answers 404 and leaves every list from now on. Its log stays readable through
   * `/_sim/truth`. Answers the project as it was.
   */
  delete(projectId: string): { project: ProjectView } {
    const project = this.requireProject(projectId);
    const answer = projectView(project, this.ctx.scheduler.nowUs);
    for (const endpoint of liveEndpoints(project)) this.ctx.world.deleteEndpoint(endpoint);
    const primary = project.branches[0];
    if (primary !== undefined) {
      this.ctx.runner.start(project, { branch: primary, action: "delete_tenant" });
    }
    project.deleted = true;
    return { project: answer };
  }

  private creationAnswer(
    project: ProjectState,
    database: string,
    role: string,
  ): CreatedProjectView {
    const branch = project.branches[0];
    const endpoint = project.endpoints[0];
    if (branch === undefined || endpoint === undefined) throw new Error("project has no branch");
    const created = toIsoSeconds(project.createdUs);
    const host = `${endpoint.id}.${project.region.proxyHost}`;
    const poolerHost = `${endpoint.id}-pooler.${project.region.proxyHost}`;
    const operations: Operation[] = [];
    for (let i = 0; i < project.log.size; i++) operations.push(operationView(project, i));
    return {
      project: projectView(project, this.ctx.scheduler.nowUs),
      connection_uris: [
        {
          connection_uri: `postgresql://${role}:${SIM_PASSWORD}@${host}/${database}?sslmode=require`,
          connection_parameters: {
            database,
            password: SIM_PASSWORD,
            role,
            host,
            pooler_host: poolerHost,
          },
        },
      ],
      roles: [
        {
          branch_id: branch.id,
          name: role,
          protected: false,
          created_at: created,
          updated_at: created,
        },
      ],
      databases: [
        {
          id: 1,
          branch_id: branch.id,
          name: database,
          owner_name: role,
          created_at: created,
          updated_at: created,
        },
      ],
      operations,
      branch: branchView(project, branch),
      endpoints: [endpointView(endpoint, this.ctx.lifecycle)],
    };
  }

  private requireProject(projectId: string): ProjectState {
    const project = this.ctx.world.project(projectId);
    if (project === undefined) throw notFound(`project ${projectId} not found`);
    return project;
  }
}
