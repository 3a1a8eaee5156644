/**
 * When each project is polled: the once-a-second tick and a timer to the next due time,
 * per-project due times with jitter (in a heap, `due-queue.ts`) that follow the activity plan
 * (open operations, then recent activity by its square root) within the request budget, the
 * backoff of what the API refuses (a project gone, a key refused), and nudges.
 */
export * from "./budget.js";
export {
  Scheduler,
  type DescribeReason,
  type JobOutcome,
  type NudgeResult,
  type PollOutcome,
  type PollStrategy,
  type SchedulerJobs,
  type SchedulerOptions,
} from "./scheduler.js";
export * from "./refusals.js";
export { TIERS, type Tier } from "./activity-plan.js";
