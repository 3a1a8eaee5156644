import type {
  EndpointType,
  CreateEndpointRequest,
  Endpoint,
  EndpointOperationsResponse,
  UpdateEndpointRequest,
} from "../../contract/index.js";
import { badRequest, conflict, locked, notFound, planLimit } from "../errors.js";
import {
  readOnlyAllowed,
  resolveCreate,
  resolveUpdate,
  sizeChanged,
  type ComputeConfig,
  type RuleOutcome,
} from "./compute-rules.js";
import type { ModelContext } from "./context.js";
import {
  applySettings,
  DEFAULT_ENDPOINT_SETTINGS,
  settingsChange,
  type SettingsRequest,
} from "./endpoint-settings.js";
import { addEndpoint, type NewEndpoint } from "./projects.js";
import { regionFor } from "./regions.js";
import {
  endpointsOnBranch,
  findBranch,
  liveEndpoints,
  type EndpointState,
  type PlanName,
  type ProjectState,
} from "./state.js";
import { endpointView, operationView } from "./views.js";

/** The answer to a deletion of an endpoint that was deleted before (real API: 204). */
export const ALREADY_DELETED = Symbol("already deleted");

/**
 * The endpoint calls of the API (seed 4.3-4.6 and the real API's start/suspend/restart), with
 * their rules. Validation comes first (400, 404, 422, 409) and the lock last (423), so that
 * a 423 always means "retry later and it will work".
 */
export class EndpointService {
  constructor(private readonly ctx: ModelContext) {}

  create(projectId: string, request: CreateEndpointRequest): EndpointOperationsResponse {
    const project = this.project(projectId);
    const body = request.endpoint;
    const branch = findBranch(project, body.branch_id);
    if (branch === undefined) throw notFound(`branch ${body.branch_id} not found`);
    requireProjectRegion(project, body.region_id);
    const spec = newEndpointSpec(project.plan, body);
    const onBranch = endpointsOnBranch(project, branch);
    if (body.type === "read_write" && onBranch.some((e) => e.type === "read_write")) {
      throw conflict(`branch ${branch.id} already has a read_write endpoint`);
    }
    const endpoint = addEndpoint(this.ctx, project, branch, spec);
    // A disabled endpoint is created idle and not started.
    if (spec.settings.disabled) return this.answer(endpoint, []);
    const started = this.ctx.lifecycle.enqueue(endpoint, this.ctx.lifecycle.startCompute(endpoint));
    return this.answer(endpoint, [started]);
  }

  list(projectId: string): { endpoints: Endpoint[] } {
    const project = this.project(projectId);
    return { endpoints: liveEndpoints(project).map((e) => this.view(e)) };
  }

  get(projectId: string, endpointId: string): { endpoint: Endpoint } {
    return { endpoint: this.view(this.endpoint(projectId, endpointId)) };
  }

  /**
   * Applies an update. The operations depend on what changed and on the compute's state:
   * - a branch change: apply_config then suspend_compute; the endpoint ends idle;
   * - anything on a compute that is not running: apply_config then suspend_compute (the
   *   real API wakes an idle compute to apply the change, then suspends it again);
   * - a size change on a running compute: apply_config, suspend_compute, start_compute
   *   (the restart of seed 3.2 rules 1-2);
   * - `disabled: true` on a running compute: apply_config then suspend_compute;
   * - only the auto-suspend delay or other settings (pg_settings, pooler, provisioner, …) on a
   *   running compute: apply_config alone, no restart (rule 4); the auto-suspend timer is
   *   re-armed with the new delay;
   * - only the name, or nothing: no operation.
   */
  update(
    projectId: string,
    endpointId: string,
    request: UpdateEndpointRequest,
  ): EndpointOperationsResponse {
    const endpoint = this.endpoint(projectId, endpointId);
    const project = endpoint.project;
    const body = request.endpoint;
    const targetBranch =
      body.branch_id === undefined || body.branch_id === endpoint.branch.id
        ? endpoint.branch
        : findBranch(project, body.branch_id);
    if (targetBranch === undefined) throw notFound(`branch ${body.branch_id ?? ""} not found`);
    const before = configOf(endpoint);
    const after = accept(
      resolveUpdate(project.plan, before, {
        minCu: body.autoscaling_limit_min_cu,
        maxCu: body.autoscaling_limit_max_cu,
        suspendTimeoutSeconds: body.suspend_timeout_seconds,
      }),
    );
    const branchChanged = targetBranch !== endpoint.branch;
    if (branchChanged && endpointsOnBranch(project, targetBranch).length > 0) {
      throw conflict(`branch ${targetBranch.id} already has an endpoint`);
    }
    this.requireUnlocked(endpoint);

    const resized = sizeChanged(before, after);
    const delayChanged = before.suspendTimeoutSeconds !== after.suspendTimeoutSeconds;
    const settings = applySettings(endpoint.settings, body);
    const change = settingsChange(endpoint.settings, settings);
    const disabling = settings.disabled && !endpoint.settings.disabled;
    endpoint.settings = settings;
    if (!branchChanged && !resized && !delayChanged && change !== "config") {
      if (change === "name") endpoint.updatedUs = this.ctx.scheduler.nowUs;
      return this.answer(endpoint, []);
    }

    endpoint.branch = targetBranch;
    endpoint.minCu = after.minCu;
    endpoint.maxCu = after.maxCu;
    endpoint.suspendTimeoutSeconds = after.suspendTimeoutSeconds;
    endpoint.updatedUs = this.ctx.scheduler.nowUs;

    const lifecycle = this.ctx.lifecycle;
    const started = [lifecycle.enqueue(endpoint, lifecycle.applyConfig(endpoint))];
    if (branchChanged || disabling || endpoint.currentState !== "active") {
      started.push(lifecycle.enqueue(endpoint, lifecycle.suspendCompute(endpoint)));
    } else if (resized) {
      started.push(lifecycle.enqueue(endpoint, lifecycle.suspendCompute(endpoint)));
      started.push(lifecycle.enqueue(endpoint, lifecycle.startCompute(endpoint)));
    } else {
      lifecycle.armSuspendTimer(endpoint);
    }
    return this.answer(endpoint, started);
  }

  /** Deletes for good; answers the last known endpoint and no operations. */
  delete(
    projectId: string,
    endpointId: string,
  ): EndpointOperationsResponse | typeof ALREADY_DELETED {
    const project = this.project(projectId);
    const endpoint = project.endpoints.find((e) => e.id === endpointId);
    if (endpoint === undefined) throw notFound(`endpoint ${endpointId} not found`);
    if (endpoint.deleted) return ALREADY_DELETED;
    this.requireUnlocked(endpoint);
    this.ctx.world.deleteEndpoint(endpoint);
    const last = this.view(endpoint);
    endpoint.updatedUs = this.ctx.scheduler.nowUs;
    return { endpoint: last, operations: [] };
  }

  start(projectId: string, endpointId: string): EndpointOperationsResponse {
    const endpoint = this.unlockedEndpoint(projectId, endpointId, "started");
    return this.answer(endpoint, this.ctx.lifecycle.start(endpoint));
  }

  suspend(projectId: string, endpointId: string): EndpointOperationsResponse {
    const endpoint = this.unlockedEndpoint(projectId, endpointId);
    return this.answer(endpoint, this.ctx.lifecycle.suspend(endpoint));
  }

  restart(projectId: string, endpointId: string): EndpointOperationsResponse {
    const endpoint = this.unlockedEndpoint(projectId, endpointId, "restarted");
    return this.answer(endpoint, this.ctx.lifecycle.restart(endpoint));
  }

  /** A client connection reaches the endpoint (the simulator's `/_sim` call). */
  connect(endpointId: string): EndpointOperationsResponse {
    const endpoint = this.ctx.world.endpoint(endpointId);
    if (endpoint === undefined) throw notFound(`endpoint ${endpointId} not found`);
    requireEnabled(endpoint, "connections are refused");
    return this.answer(endpoint, this.ctx.lifecycle.connect(endpoint));
  }

  private answer(endpoint: EndpointState, started: readonly number[]): EndpointOperationsResponse {
    return {
      endpoint: this.view(endpoint),
      operations: started.map((i) => operationView(endpoint.project, i)),
    };
  }

  private view(endpoint: EndpointState): Endpoint {
    return endpointView(endpoint, this.ctx.lifecycle);
  }

  private project(projectId: string): ProjectState {
    const project = this.ctx.world.project(projectId);
    if (project === undefined) throw notFound(`project ${projectId} not found`);
    return project;
  }

  private endpoint(projectId: string, endpointId: string): EndpointState {
    const endpoint = this.project(projectId).endpoints.find((e) => e.id === endpointId);
    if (endpoint === undefined || endpoint.deleted) {
      throw notFound(`endpoint ${endpointId} not found`);
    }
    return endpoint;
  }

  /** An endpoint no operation holds; `starting` names a start that a disabled one refuses. */
  private unlockedEndpoint(
    projectId: string,
    endpointId: string,
    starting?: string,
  ): EndpointState {
    const endpoint = this.endpoint(projectId, endpointId);
    if (starting !== undefined) requireEnabled(endpoint, `it cannot be ${starting}`);
    this.requireUnlocked(endpoint);
    return endpoint;
  }

  private requireUnlocked(endpoint: EndpointState): void {
    if (this.ctx.lifecycle.isLocked(endpoint)) {
      throw locked(`endpoint ${endpoint.id} is locked by an operation in progress`);
    }
  }
}

function configOf(endpoint: EndpointState): ComputeConfig {
  return {
    minCu: endpoint.minCu,
    maxCu: endpoint.maxCu,
    suspendTimeoutSeconds: endpoint.suspendTimeoutSeconds,
  };
}

/** What a new endpoint's request asks for, checked against the project's plan (400, 422). */
export function newEndpointSpec(
  plan: PlanName,
  body: SettingsRequest & {
    readonly type: EndpointType;
    readonly autoscaling_limit_min_cu?: number | undefined;
    readonly autoscaling_limit_max_cu?: number | undefined;
    readonly suspend_timeout_seconds?: number | undefined;
  },
): NewEndpoint {
  const config = accept(
    readOnlyAllowed(plan, body.type) ??
      resolveCreate(plan, {
        minCu: body.autoscaling_limit_min_cu,
        maxCu: body.autoscaling_limit_max_cu,
        suspendTimeoutSeconds: body.suspend_timeout_seconds,
      }),
  );
  return { type: body.type, config, settings: applySettings(DEFAULT_ENDPOINT_SETTINGS, body) };
}

/** A disabled endpoint is never started (409): re-enable it with an update first. */
function requireEnabled(endpoint: EndpointState, what: string): void {
  if (endpoint.settings.disabled) {
    throw conflict(`endpoint ${endpoint.id} is disabled: ${what}`);
  }
}

/**
 * An endpoint is created in its project's region (the real API: "Only the project's
 * `region_id` is permitted"); another one is refused rather than ignored.
 */
function requireProjectRegion(project: ProjectState, regionId: string | undefined): void {
  if (regionId === undefined || regionFor(regionId) === project.region) return;
  throw badRequest(
    `region_id: an endpoint is created in its project's region (${project.region.id}), not ${regionId}`,
  );
}

function accept(outcome: RuleOutcome): ComputeConfig {
  if (outcome.ok) return outcome.config;
  throw outcome.status === 400 ? badRequest(outcome.message) : planLimit(outcome.message);
}
