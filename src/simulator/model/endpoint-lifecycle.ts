import { effectiveSuspendSeconds } from "../../contract/index.js";
import type { Scheduler } from "../scheduler.js";
import { secondsToMicros } from "../time.js";
import { OperationChain } from "./operation-chain.js";
import type { OperationRunner, OperationSpec } from "./operation-runner.js";
import type { ComputeState, EndpointState, World } from "./state.js";

/** The state a start or suspend moves an endpoint to (what `pending_state` shows). */
const TARGET_STATE: Readonly<Record<string, ComputeState>> = {
  start_compute: "active",
  suspend_compute: "idle",
};

/**
 * The compute endpoint state machine of seed 3.2: starts and suspends as operations queued on
 * the endpoint, the auto-suspend timer, and what a connection does to an idle endpoint.
 */
export class EndpointLifecycle {
  constructor(
    private readonly runner: OperationRunner,
    private readonly scheduler: Scheduler,
    /** Its compute host (if any) hears of starts and suspends, and holds off auto-suspends. */
    private readonly world?: World,
  ) {}

  /**
   * `pending_state`: where the queued operations take the endpoint, i.e. the target of the
   * last start or suspend still pending; undefined when none is.
   */
  pendingState(endpoint: EndpointState): ComputeState | undefined {
    const actions = endpoint.chain?.pendingActions() ?? [];
    for (let i = actions.length - 1; i >= 0; i--) {
      const target = TARGET_STATE[actions[i] ?? ""];
      if (target !== undefined) return target;
    }
    return undefined;
  }

  /** The state the endpoint is in, or will be in once its queued operations end. */
  projectedState(endpoint: EndpointState): ComputeState {
    return this.pendingState(endpoint) ?? endpoint.currentState;
  }

  isLocked(endpoint: EndpointState): boolean {
    return endpoint.holds > 0;
  }

  /** Queues an operation on the endpoint; returns its log index. */
  enqueue(endpoint: EndpointState, spec: OperationSpec): number {
    endpoint.chain ??= new OperationChain(this.runner, endpoint.project, () => {
      endpoint.chain = undefined;
    });
    return endpoint.chain.enqueue(spec);
  }

  /** Records an operation that had nothing to do (a start of an active compute). */
  skip(endpoint: EndpointState, action: string): number {
    return this.runner.start(endpoint.project, {
      branch: endpoint.branch,
      endpoint,
      action,
      plan: [{ status: "skipped", offsetUs: 0 }],
    });
  }

  startCompute(endpoint: EndpointState): OperationSpec {
    return {
      branch: endpoint.branch,
      endpoint,
      action: "start_compute",
      onEnd: (status) => {
        if (status === "finished") this.becomeActive(endpoint);
        else if (endpoint.currentState === "init") this.setState(endpoint, "idle");
      },
    };
  }

  suspendCompute(endpoint: EndpointState): OperationSpec {
    return {
      branch: endpoint.branch,
      endpoint,
      action: "suspend_compute",
      onEnd: (status) => {
        if (status === "finished") this.becomeIdle(endpoint);
        else this.armSuspendTimer(endpoint);
      },
    };
  }

  applyConfig(endpoint: EndpointState): OperationSpec {
    return { branch: endpoint.branch, endpoint, action: "apply_config" };
  }

  /**
   * A client connection reaches the endpoint: it counts as activity, and a compute that is
   * idle (or about to be) is started. Returns the indices of the operations started.
   */
  connect(endpoint: EndpointState): number[] {
    const now = this.scheduler.nowUs;
    endpoint.lastActivityUs = now;
    if (this.projectedState(endpoint) === "active") {
      if (endpoint.currentState === "active") {
        endpoint.lastActiveUs = now;
        this.armSuspendTimer(endpoint);
      }
      return [];
    }
    return [this.enqueue(endpoint, this.startCompute(endpoint))];
  }

  /** Explicit start: a start_compute, or a skipped one when the compute already runs. */
  start(endpoint: EndpointState): number[] {
    endpoint.lastActivityUs = this.scheduler.nowUs;
    if (endpoint.currentState === "active") return [this.skip(endpoint, "start_compute")];
    return [this.enqueue(endpoint, this.startCompute(endpoint))];
  }

  /** Explicit suspend: a suspend_compute, or a skipped one when the compute is not running. */
  suspend(endpoint: EndpointState): number[] {
    if (endpoint.currentState !== "active") return [this.skip(endpoint, "suspend_compute")];
    return [this.enqueue(endpoint, this.suspendCompute(endpoint))];
  }

  /** Restart: suspend then start a running compute; just start one that is not running. */
  restart(endpoint: EndpointState): number[] {
    endpoint.lastActivityUs = this.scheduler.nowUs;
    const started: number[] = [];
    if (endpoint.currentState === "active") {
      started.push(this.enqueue(endpoint, this.suspendCompute(endpoint)));
    }
    started.push(this.enqueue(endpoint, this.startCompute(endpoint)));
    return started;
  }

  /**
   * A client of the hosted compute did something (`computes/`: a statement, a transaction, a
   * new session): activity, from which the auto-suspend delay counts again.
   */
  clientActivity(endpoint: EndpointState): void {
    if (endpoint.deleted || endpoint.currentState !== "active") return;
    const now = this.scheduler.nowUs;
    if (now <= endpoint.lastActivityUs) return;
    endpoint.lastActivityUs = now;
    endpoint.lastActiveUs = now;
    this.armSuspendTimer(endpoint);
  }

  /**
   * (Re)arms the auto-suspend timer: it fires after the delay counted from the last activity.
   * An armed timer that is no longer current does nothing when it comes due.
   */
  armSuspendTimer(endpoint: EndpointState): void {
    const generation = ++endpoint.suspendTimer;
    const delaySeconds = effectiveSuspendSeconds(endpoint.suspendTimeoutSeconds);
    if (delaySeconds === null) return;
    const dueUs = endpoint.lastActivityUs + secondsToMicros(delaySeconds);
    this.scheduler.at(dueUs, () => {
      if (generation !== endpoint.suspendTimer || endpoint.deleted) return;
      if (endpoint.currentState !== "active") return;
      // A client still running a statement or holding a transaction is activity now (the
      // compute's activity monitor reports it), so the delay starts again.
      if (this.world?.computeEvents?.busy(endpoint) === true) {
        this.clientActivity(endpoint);
        return;
      }
      if (this.isLocked(endpoint)) {
        endpoint.suspendWhenReleased = true;
        return;
      }
      this.enqueue(endpoint, this.suspendCompute(endpoint));
    });
  }

  /** No operation holds the endpoint any more: a suspend that came due meanwhile may run. */
  released(endpoint: EndpointState): void {
    if (!endpoint.suspendWhenReleased) return;
    endpoint.suspendWhenReleased = false;
    if (endpoint.currentState === "active" && !endpoint.deleted) this.armSuspendTimer(endpoint);
  }

  private becomeActive(endpoint: EndpointState): void {
    const now = this.scheduler.nowUs;
    this.setState(endpoint, "active");
    endpoint.startedAtUs = now;
    endpoint.lastActiveUs = now;
    endpoint.lastActivityUs = now;
    this.armSuspendTimer(endpoint);
    this.world?.computeEvents?.started(endpoint);
  }

  private becomeIdle(endpoint: EndpointState): void {
    this.setState(endpoint, "idle");
    endpoint.suspendedAtUs = this.scheduler.nowUs;
    endpoint.suspendTimer++;
    this.world?.computeEvents?.suspended(endpoint);
  }

  private setState(endpoint: EndpointState, state: ComputeState): void {
    endpoint.currentState = state;
    endpoint.updatedUs = this.scheduler.nowUs;
  }
}
