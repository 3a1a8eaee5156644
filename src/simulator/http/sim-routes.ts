import type { Clock } from "../clock.js";
import { badRequest, conflict, notFound } from "../errors.js";
import { DEFAULT_USER_ID, keyOwnerOf } from "../model/accounts.js";
import type { ControlPlane } from "../model/control-plane.js";
import { regionFor } from "../model/regions.js";
import { microsToDate } from "../time.js";
import type { FaultRegistry } from "./faults.js";
import { param, type Handler } from "./request.js";
import { Router } from "./router.js";
import {
  advanceClockSchema,
  addMemberSchema,
  bulkSchema,
  computeSettingsSchema,
  createApiKeySchema,
  createOrganizationSchema,
  createProjectSchema,
  faultSchema,
  scriptOperationSchema,
  type SimComputeRequest,
} from "./sim-schemas.js";
import type { RequestStats } from "./stats.js";
import type {
  SimAdvanceResponse,
  SimApiKeyResponse,
  SimOrganizationResponse,
  SimOrganizationsResponse,
  SimBulkResponse,
  SimClearFaultsResponse,
  SimClockResponse,
  SimComputeResponse,
  SimComputeView,
  SimConnectResponse,
  SimFaultResponse,
  SimFaultsResponse,
  SimOperationResponse,
  SimProjectResponse,
  SimStatsResponse,
  SimTrafficResponse,
  SimTruthResponse,
} from "../sim-api.js";

/** What the `/_sim` interface controls. */
export interface SimControls {
  readonly plane: ControlPlane;
  readonly clock: Clock;
  /** Applies every event due at the clock's current time. */
  settle(): void;
  readonly faults: FaultRegistry;
  readonly stats: RequestStats;
  /** The ids of the projects the traffic keeps busy, most active first. */
  trafficProjects(): readonly string[];
  /** Absent when the simulator hosts no computes (their routes answer 409). */
  readonly computes?: ComputeControls | undefined;
}

/** The computes on a real PostgreSQL server (`computes/`), when the simulator hosts them. */
export interface ComputeControls {
  view(endpointId: string): SimComputeView;
  configure(endpointId: string, request: SimComputeRequest): Promise<SimComputeView>;
}

/** The `/_sim` routes (paths relative to it). Shapes are documented in the README. */
export function simRouter(sim: SimControls): Router<Handler> {
  const { plane } = sim;
  const now = (): string => microsToDate(plane.scheduler.nowUs).toISOString();
  const router = new Router<Handler>();

  router.add("POST", "/projects", "createProject", createProject(plane));

  router.add("POST", "/organizations", "createOrganization", (r) => {
    const body = r.json(createOrganizationSchema);
    const org = plane.createOrganization(body);
    return { status: 201, body: { organization: org } satisfies SimOrganizationResponse };
  });
  router.add("GET", "/organizations", "listOrganizations", () => ({
    status: 200,
    body: { organizations: plane.accounts.listOrganizations() } satisfies SimOrganizationsResponse,
  }));
  router.add("POST", "/organizations/:org_id/members", "addMember", (r) => {
    const { user } = r.json(addMemberSchema);
    const org = plane.accounts.addMember(param(r, "org_id"), user);
    return { status: 200, body: { organization: org } satisfies SimOrganizationResponse };
  });
  router.add("POST", "/api-keys", "createApiKey", (r) => {
    const body = r.json(createApiKeySchema);
    const owner = "user" in body ? { user: body.user } : { org: body.org };
    plane.accounts.addKey(body.key, keyOwnerOf(body));
    return { status: 201, body: { api_key: owner } satisfies SimApiKeyResponse };
  });

  router.add("GET", "/clock", "getClock", () => ({
    status: 200,
    body: { now: now(), mode: sim.clock.mode } satisfies SimClockResponse,
  }));
  router.add("POST", "/clock/advance", "advanceClock", (r) => {
    const { seconds } = r.json(advanceClockSchema);
    if (sim.clock.mode !== "manual")
      throw conflict("the clock follows wall time; start with clock manual");
    sim.clock.advance(seconds);
    sim.settle();
    return { status: 200, body: { now: now() } satisfies SimAdvanceResponse };
  });

  router.add("POST", "/endpoints/:endpoint_id/connect", "connect", (r) => ({
    status: 200,
    body: plane.endpoints.connect(param(r, "endpoint_id")) satisfies SimConnectResponse,
  }));

  const computes = (): ComputeControls => {
    if (sim.computes === undefined) {
      throw conflict("the simulator hosts no computes: start it with computes (--computes URL)");
    }
    return sim.computes;
  };
  router.add("GET", "/endpoints/:endpoint_id/compute", "getCompute", (r) => ({
    status: 200,
    body: { compute: computes().view(param(r, "endpoint_id")) } satisfies SimComputeResponse,
  }));
  router.add("POST", "/endpoints/:endpoint_id/compute", "configureCompute", async (r) => {
    const body = r.json(computeSettingsSchema);
    const compute = await computes().configure(param(r, "endpoint_id"), body);
    return { status: 200, body: { compute } satisfies SimComputeResponse };
  });

  router.add("POST", "/operations", "scriptOperation", (r) => ({
    status: 201,
    body: {
      operation: plane.scriptOperation(r.json(scriptOperationSchema)),
    } satisfies SimOperationResponse,
  }));

  router.add("POST", "/faults", "addFault", (r) => ({
    status: 201,
    body: { fault: sim.faults.add(r.json(faultSchema)) } satisfies SimFaultResponse,
  }));
  router.add("GET", "/faults", "listFaults", () => ({
    status: 200,
    body: { faults: sim.faults.list() } satisfies SimFaultsResponse,
  }));
  router.add("DELETE", "/faults", "clearFaults", () => ({
    status: 200,
    body: { cleared: sim.faults.clear() } satisfies SimClearFaultsResponse,
  }));

  router.add("GET", "/truth", "truth", (r) => {
    const projectId = r.query.get("project_id");
    if (projectId === null) throw badRequest("project_id is required");
    return { status: 200, body: plane.truth(projectId) satisfies SimTruthResponse };
  });

  router.add("GET", "/stats", "stats", () => ({
    status: 200,
    body: sim.stats.view() satisfies SimStatsResponse,
  }));
  router.add("DELETE", "/stats", "resetStats", () => {
    sim.stats.reset();
    return { status: 200, body: sim.stats.view() };
  });

  router.add("GET", "/traffic", "traffic", () => ({
    status: 200,
    body: { projects: [...sim.trafficProjects()] } satisfies SimTrafficResponse,
  }));

  router.add("POST", "/bulk", "bulk", seedBulk(plane));
  return router;
}

/**
 * `POST /_sim/projects`: a project of a user or an organisation, in a region, with its
 * branches; the answer names the primary branch's endpoint too.
 */
function createProject(plane: ControlPlane): Handler {
  return (r) => {
    const body = r.json(createProjectSchema);
    const region = regionFor(body.region_id);
    if (body.org_id !== undefined && plane.accounts.organization(body.org_id) === undefined) {
      throw notFound(`organization ${body.org_id} not found`);
    }
    const project = plane.createProject({
      plan: body.plan,
      branches: body.branches,
      ...(body.availability_checks === undefined
        ? {}
        : { availabilityChecks: body.availability_checks }),
      ownership: {
        ownerId: body.org_id ?? body.user ?? DEFAULT_USER_ID,
        orgId: body.org_id,
      },
      region,
    });
    return {
      status: 201,
      body: {
        project: {
          id: project.id,
          plan: project.plan,
          owner_id: project.ownerId,
          ...(project.orgId === undefined ? {} : { org_id: project.orgId }),
          region_id: project.region.id,
        },
        branches: project.branches.map((b) => ({ id: b.id, primary: b.primary })),
        endpoints: project.endpoints.map((e) => ({ id: e.id, branch_id: e.branch.id })),
      } satisfies SimProjectResponse,
    };
  };
}

/** `POST /_sim/bulk`: many projects with finished histories at once. */
function seedBulk(plane: ControlPlane): Handler {
  return (r) => {
    const body = r.json(bulkSchema);
    const result = plane.seedBulk({
      projects: body.projects,
      operationsPerProject: body.operations_per_project,
      ...(body.plan === undefined ? {} : { plan: body.plan }),
      ...(body.span_seconds === undefined ? {} : { spanSeconds: body.span_seconds }),
      ...(body.availability_checks === undefined
        ? {}
        : { availabilityChecks: body.availability_checks }),
      ...(body.region_id === undefined ? {} : { regionId: body.region_id }),
    });
    return {
      status: 201,
      body: {
        project_ids: result.projectIds,
        operations: result.operations,
      } satisfies SimBulkResponse,
    };
  };
}
