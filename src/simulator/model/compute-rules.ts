import { COMPUTE_SIZES, FREE_PLAN_CU, SUSPEND_TIMEOUT } from "../../contract/index.js";
import type { EndpointType } from "../../contract/index.js";
import type { PlanName } from "./state.js";

/**
 * The sizing, plan and auto-suspend rules of seed sections 2.5, 3.3 and 8, as pure functions
 * over a requested configuration. Malformed values answer 400; values that are well-formed
 * but beyond the project's plan answer 422.
 */

export interface ComputeConfig {
  readonly minCu: number;
  readonly maxCu: number;
  readonly suspendTimeoutSeconds: number;
}

export interface ComputeRequest {
  readonly minCu?: number | undefined;
  readonly maxCu?: number | undefined;
  readonly suspendTimeoutSeconds?: number | undefined;
}

export type RuleOutcome =
  | { readonly ok: true; readonly config: ComputeConfig }
  | { readonly ok: false; readonly status: 400 | 422; readonly message: string };

const SIZES: readonly number[] = COMPUTE_SIZES.map((s) => s.cu);
/** A new endpoint without sizes is fixed at the smallest size, the free plan's only one. */
const DEFAULT_CU = FREE_PLAN_CU;

/** Free plans keep the service's default auto-suspend delay; these values both mean it. */
const FREE_SUSPEND_VALUES: readonly number[] = [0, SUSPEND_TIMEOUT.defaultSeconds];

export function readOnlyAllowed(plan: PlanName, type: EndpointType): RuleOutcome | undefined {
  if (type === "read_only" && plan === "free") {
    return { ok: false, status: 422, message: "read replicas (read_only) need a paid plan" };
  }
  return undefined;
}

/** The configuration of a new endpoint: unspecified sizes default to a fixed 0.25 CU. */
export function resolveCreate(plan: PlanName, request: ComputeRequest): RuleOutcome {
  const minCu = request.minCu ?? DEFAULT_CU;
  const maxCu = request.maxCu ?? Math.max(minCu, DEFAULT_CU);
  return check(plan, request, {
    minCu,
    maxCu,
    suspendTimeoutSeconds: request.suspendTimeoutSeconds ?? 0,
  });
}

/** The configuration after an update: unspecified fields keep their current values. */
export function resolveUpdate(
  plan: PlanName,
  current: ComputeConfig,
  request: ComputeRequest,
): RuleOutcome {
  return check(plan, request, {
    minCu: request.minCu ?? current.minCu,
    maxCu: request.maxCu ?? current.maxCu,
    suspendTimeoutSeconds: request.suspendTimeoutSeconds ?? current.suspendTimeoutSeconds,
  });
}

/** True when the sizes differ: the change that restarts a running compute. */
export function sizeChanged(before: ComputeConfig, after: ComputeConfig): boolean {
  return before.minCu !== after.minCu || before.maxCu !== after.maxCu;
}

function check(plan: PlanName, request: ComputeRequest, config: ComputeConfig): RuleOutcome {
  for (const [field, value] of [
    ["autoscaling_limit_min_cu", request.minCu],
    ["autoscaling_limit_max_cu", request.maxCu],
  ] as const) {
    if (value !== undefined && !SIZES.includes(value)) {
      return { ok: false, status: 400, message: `${field} must be one of ${SIZES.join(", ")}` };
    }
  }
  if (config.minCu > config.maxCu) {
    return {
      ok: false,
      status: 400,
      message: "autoscaling_limit_min_cu must not exceed autoscaling_limit_max_cu",
    };
  }
  if (plan === "free") {
    if (config.minCu !== FREE_PLAN_CU || config.maxCu !== FREE_PLAN_CU) {
      return {
        ok: false,
        status: 422,
        message: `the free plan's compute is fixed at ${FREE_PLAN_CU} CU`,
      };
    }
    if (!FREE_SUSPEND_VALUES.includes(config.suspendTimeoutSeconds)) {
      return {
        ok: false,
        status: 422,
        message: `the free plan keeps the default auto-suspend delay (${SUSPEND_TIMEOUT.defaultSeconds} s)`,
      };
    }
  }
  return { ok: true, config };
}
