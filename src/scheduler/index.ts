/**
 * When each project is polled: the once-a-second tick, per-project due times with jitter, the
 * tiers of the activity plan (open, recent, idle operations) within the request budget, the
 * backoff of what the API refuses (a project gone, a key refused), and nudges.
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
