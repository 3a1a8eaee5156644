/**
 * When each project is polled: the once-a-second tick, per-project due times with jitter, the
 * fast lane for projects with open operations, and the request budget that stretches intervals.
 */
export * from "./budget.js";
export { Scheduler, type SchedulerJobs, type SchedulerOptions } from "./scheduler.js";
