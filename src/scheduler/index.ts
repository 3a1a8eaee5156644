/**
 * When each project is polled: the once-a-second tick, per-project due times with jitter, the
 * fast lane for projects with open operations, the request budget that stretches intervals,
 * and the backoff of what the API refuses (a project gone, a key refused).
 */
export * from "./budget.js";
export {
  Scheduler,
  type JobOutcome,
  type NudgeResult,
  type PollStrategy,
  type SchedulerJobs,
  type SchedulerOptions,
} from "./scheduler.js";
export * from "./refusals.js";
export { TIERS, type Tier } from "./activity-plan.js";
