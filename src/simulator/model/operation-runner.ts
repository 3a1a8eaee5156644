import type { IdFactory } from "../ids.js";
import type { Scheduler } from "../scheduler.js";
import { normalDurationUs, normalPolicy, type PlanPolicy, type PlanStep } from "./plans.js";
import type { BranchState, EndpointState, ProjectState } from "./state.js";
import { holdsEndpoint } from "./status-rules.js";

/** An operation to create: what it acts on and, optionally, a fixed plan. */
export interface OperationSpec {
  readonly branch: BranchState;
  readonly endpoint?: EndpointState;
  readonly action: string;
  /** A fixed plan (scripted operations); otherwise the plan policy decides. */
  readonly plan?: readonly PlanStep[];
  /** Called once, after the plan's last step, with the status it ended in. */
  readonly onEnd?: (status: string) => void;
  /**
   * A misdated record: the offset of its shown `created_at` (microseconds). When absent, the
   * runner's `misdate` hook decides (the `misdated` fault).
   */
  readonly createdOffsetUs?: number;
}

/** An operation whose course the plan policy decides, as it starts running. */
export interface RunningOperation {
  readonly projectId: string;
  readonly regionId: string;
  readonly action: string;
  /** The ids of what it acts on and its own (formatted only when asked). */
  ids(): {
    readonly branchId: string;
    readonly endpointId: string | undefined;
    readonly operationId: string;
  };
}

/**
 * Asked for each operation whose course the plan policy decides, as it starts running: the
 * error text it fails with instead (the `failed_operations` fault), or undefined.
 */
export type FailureHook = (operation: RunningOperation) => string | undefined;

/**
 * Creates operation records and moves them through their plans on the scheduler. It also
 * keeps each endpoint's count of holding operations, which is what makes calls answer 423.
 */
export class OperationRunner {
  /** Replaced by the traffic generator to give its projects failures, retries and delays. */
  policy: PlanPolicy = normalPolicy;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly ids: IdFactory,
    private readonly released: (endpoint: EndpointState) => void,
    /** Asked for each new record without its own offset: a misdating offset, or undefined. */
    private readonly misdate: () => number | undefined = () => undefined,
    private readonly failure: FailureHook = () => undefined,
  ) {}

  /** Creates an operation now and runs its plan from now; returns its log index. */
  start(project: ProjectState, spec: OperationSpec): number {
    const plan = spec.plan ?? this.policy.planFor(project, spec.action);
    const first = plan[0];
    if (first === undefined) throw new RangeError("an operation plan needs at least one step");
    const index = this.create(project, spec, first.status, first.error);
    const course = spec.plan === undefined ? this.failing(project, index, spec, plan) : plan;
    this.continuePlan(project, index, spec, course, 1, this.scheduler.nowUs);
    return index;
  }

  /** Creates an operation now in `scheduling`; `run` starts it later. */
  schedule(project: ProjectState, spec: OperationSpec): number {
    return this.create(project, spec, "scheduling", undefined);
  }

  /** Runs the plan of an operation created by `schedule`, from now. */
  run(project: ProjectState, index: number, spec: OperationSpec): void {
    const plan = spec.plan ?? this.policy.planFor(project, spec.action);
    const course = spec.plan === undefined ? this.failing(project, index, spec, plan) : plan;
    this.continuePlan(project, index, spec, course, 0, this.scheduler.nowUs);
  }

  /** Moves an operation straight to `status` (a queued one that will never run). */
  end(project: ProjectState, index: number, status: string): void {
    this.apply(project, index, status, undefined);
  }

  /**
   * The policy's plan, or, when the failure hook answers an error text, the plan's first step
   * and then `failed` with that text after the action's normal duration: the operation ends
   * failed (failures_count 1) and is not retried. The policy is asked either way, so that a
   * failure never shifts the outcomes of later operations.
   */
  private failing(
    project: ProjectState,
    index: number,
    spec: OperationSpec,
    plan: readonly PlanStep[],
  ): readonly PlanStep[] {
    const first = plan[0];
    if (first === undefined) return plan;
    const error = this.failure({
      projectId: project.id,
      regionId: project.region.id,
      action: spec.action,
      ids: () => ({
        branchId: spec.branch.id,
        endpointId: spec.endpoint?.id,
        operationId: project.log.id(index),
      }),
    });
    if (error === undefined) return plan;
    const failAtUs = first.offsetUs + normalDurationUs(spec.action);
    // An empty text (a template of ids the operation lacks) shows the default message.
    return [first, { status: "failed", offsetUs: failAtUs, ...(error === "" ? {} : { error }) }];
  }

  private create(
    project: ProjectState,
    spec: OperationSpec,
    status: string,
    error: string | undefined,
  ): number {
    const createdOffsetUs = spec.createdOffsetUs ?? this.misdate();
    const index = project.log.append({
      id: this.ids.uuidWords(),
      branch: spec.branch.index,
      endpoint: spec.endpoint?.index ?? -1,
      action: spec.action,
      status,
      atUs: this.scheduler.nowUs,
      ...(error === undefined ? {} : { error }),
      ...(createdOffsetUs === undefined ? {} : { createdOffsetUs }),
    });
    this.adjustHolds(project, index, undefined, status);
    return index;
  }

  private continuePlan(
    project: ProjectState,
    index: number,
    spec: OperationSpec,
    plan: readonly PlanStep[],
    stepIndex: number,
    startUs: number,
  ): void {
    const step = plan[stepIndex];
    if (step === undefined) {
      spec.onEnd?.(project.log.status(index));
      return;
    }
    const fire = (): void => {
      this.apply(project, index, step.status, step.error);
      this.continuePlan(project, index, spec, plan, stepIndex + 1, startUs);
    };
    const atUs = startUs + step.offsetUs;
    // Steps already due are applied at once, so a response shows them.
    if (atUs <= this.scheduler.nowUs) fire();
    else this.scheduler.at(atUs, fire);
  }

  private apply(
    project: ProjectState,
    index: number,
    status: string,
    error: string | undefined,
  ): void {
    const previous = project.log.status(index);
    project.log.transition(index, status, this.scheduler.nowUs, error);
    this.adjustHolds(project, index, previous, status);
  }

  private adjustHolds(
    project: ProjectState,
    index: number,
    previous: string | undefined,
    next: string,
  ): void {
    const endpointIndex = project.log.endpoint(index);
    const endpoint = endpointIndex === undefined ? undefined : project.endpoints[endpointIndex];
    if (endpoint === undefined) return;
    const action = project.log.action(index);
    const before = previous !== undefined && holdsEndpoint(action, previous) ? 1 : 0;
    const after = holdsEndpoint(action, next) ? 1 : 0;
    endpoint.holds += after - before;
    if (after < before && endpoint.holds === 0) this.released(endpoint);
  }
}
