import type { Operation } from "../../contract/index.js";
import { badRequest, notFound } from "../errors.js";
import { secondsToMicros } from "../time.js";
import type { ModelContext } from "./context.js";
import type { PlanStep } from "./plans.js";
import { findBranch } from "./state.js";
import { operationView } from "./views.js";

export interface ScriptedStep {
  readonly status: string;
  /** Offset from the operation's creation; the first step's is 0 (creation happens now). */
  readonly after_seconds: number;
  readonly error?: string | undefined;
}

export interface ScriptedOperation {
  readonly project_id: string;
  readonly branch_id: string;
  readonly endpoint_id?: string | undefined;
  /** Any non-empty action: actions are an open set (and tests send hostile ones). */
  readonly action: string;
  readonly steps: readonly ScriptedStep[];
  /**
   * A misdated record: its shown `created_at` is this far from its real creation (now, which
   * stays its place in the log and its cursor). Absent: the `misdated` fault may decide.
   */
  readonly created_at_offset_seconds?: number | undefined;
}

/** The steps as a plan, or a 400 explaining what is wrong with them. */
function planFromSteps(steps: readonly ScriptedStep[]): PlanStep[] {
  if (steps.length === 0) throw badRequest("steps must not be empty");
  if (steps[0]?.after_seconds !== 0) throw badRequest("the first step's after_seconds must be 0");
  let previous = 0;
  return steps.map((step, i) => {
    // Any non-empty status: unknown ones exercise a client's handling of undocumented values.
    if (step.status === "") throw badRequest(`steps[${i}].status must not be empty`);
    if (!(step.after_seconds >= previous)) {
      throw badRequest(`steps[${i}].after_seconds must not be before the previous step's`);
    }
    previous = step.after_seconds;
    return {
      status: step.status,
      offsetUs: secondsToMicros(step.after_seconds),
      ...(step.error === undefined ? {} : { error: step.error }),
    };
  });
}

/**
 * Appends a scripted operation to a project's log and plays its steps on the simulated clock.
 * It is a pure record: it changes no endpoint state, but while it is open it holds its
 * endpoint like any other operation (calls changing that endpoint answer 423).
 */
export function scriptOperation(ctx: ModelContext, request: ScriptedOperation): Operation {
  const plan = planFromSteps(request.steps);
  const project = ctx.world.project(request.project_id);
  if (project === undefined) throw notFound(`project ${request.project_id} not found`);
  const branch = findBranch(project, request.branch_id);
  if (branch === undefined) throw notFound(`branch ${request.branch_id} not found`);
  const endpoint =
    request.endpoint_id === undefined
      ? undefined
      : project.endpoints.find((e) => e.id === request.endpoint_id && !e.deleted);
  if (request.endpoint_id !== undefined && endpoint === undefined) {
    throw notFound(`endpoint ${request.endpoint_id} not found`);
  }
  const index = ctx.runner.start(project, {
    branch,
    ...(endpoint === undefined ? {} : { endpoint }),
    action: request.action,
    plan,
    ...(request.created_at_offset_seconds === undefined
      ? {}
      : { createdOffsetUs: secondsToMicros(request.created_at_offset_seconds) }),
  });
  return operationView(project, index);
}
