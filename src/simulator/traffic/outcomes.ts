import { normalDurationUs, normalPlan, type PlanPolicy, type PlanStep } from "../model/plans.js";
import type { SeededRandom } from "../random.js";
import { US_PER_SECOND } from "../time.js";
import type { ResolvedTrafficOptions } from "./options.js";

const FAILURE_MESSAGES = [
  "compute node failed to start: timed out waiting for the pageserver",
  "could not apply configuration: connection reset by peer",
  "storage controller unavailable",
  "safekeeper quorum not reached",
  "compute pod evicted during operation",
] as const;

type Shares = Pick<
  ResolvedTrafficOptions,
  "failureShare" | "retryShare" | "slowShare" | "cancellationShare"
>;

/**
 * How one generated operation unfolds. Durations vary from half to one and a half times the
 * action's normal one (and are 20-60 times longer for slow ones). Then, by share:
 * - cancelled: running → cancellation_pending → cancelled;
 * - failed (failures_count 1), then of those, by `retryShare`: retried after 5-30 s and
 *   finished (failures_count stays 1, retry_at set); of the rest, half are retried and end
 *   in `error` (failures_count 2), half stay `failed` (never retried);
 * - otherwise running → finished.
 */
export function trafficPlan(action: string, random: SeededRandom, shares: Shares): PlanStep[] {
  let durationUs = normalDurationUs(action) * random.between(0.5, 1.5);
  if (random.chance(shares.slowShare)) durationUs *= random.between(20, 60);
  const at = (us: number): number => Math.round(us);
  const roll = random.next();
  if (roll < shares.cancellationShare) {
    const cancelAt = durationUs / 2;
    return [
      { status: "running", offsetUs: 0 },
      { status: "cancellation_pending", offsetUs: at(cancelAt) },
      { status: "cancelled", offsetUs: at(cancelAt + random.between(1, 3) * US_PER_SECOND) },
    ];
  }
  if (roll < shares.cancellationShare + shares.failureShare) {
    const failAt = durationUs / 2;
    const retryAt = failAt + random.between(5, 30) * US_PER_SECOND;
    const steps: PlanStep[] = [
      { status: "running", offsetUs: 0 },
      { status: "failed", offsetUs: at(failAt), error: random.pick(FAILURE_MESSAGES) },
    ];
    if (random.chance(shares.retryShare)) {
      steps.push({ status: "running", offsetUs: at(retryAt) });
      steps.push({ status: "finished", offsetUs: at(retryAt + durationUs) });
    } else if (random.chance(0.5)) {
      steps.push({ status: "running", offsetUs: at(retryAt) });
      steps.push({
        status: "error",
        offsetUs: at(retryAt + durationUs / 2),
        error: random.pick(FAILURE_MESSAGES),
      });
    }
    return steps;
  }
  return [
    { status: "running", offsetUs: 0 },
    { status: "finished", offsetUs: at(durationUs) },
  ];
}

/** Generated projects get the traffic's outcome mix; every other project runs normally. */
export function trafficPolicy(random: SeededRandom, shares: Shares): PlanPolicy {
  return {
    planFor: (project, action) =>
      project.generated ? trafficPlan(action, random, shares) : normalPlan(action),
  };
}
