/**
 * When each project is polled. The scheduler (`scheduler.ts`) is a thin composition of parts
 * with one job each, sharing one entry per project (`entry.ts`: its lane, due times, last poll,
 * activity, slowness, refusal):
 *
 * - planning: `planner.ts` keeps the plan of the moment and makes each project's due times of
 *   it; the plan itself is pure arithmetic (`schedule-plan.ts`) over the request budget
 *   (`budget.ts`) and the activity plan (`activity-plan.ts`: open operations, then recent
 *   activity by its square root), fed by each project's activity (`activity.ts`) and the
 *   measured rate of the listings that operations trigger (`triggered-rate.ts`);
 * - dispatch: `dispatcher.ts` starts what is due (in a heap, `due-queue.ts`) within the slots
 *   and the slow projects' share, on the tick and a timer to the next due time;
 * - one project's job and what it learns: `job.ts`, running the daemon's jobs (`jobs.ts`);
 * - refusals: `refusal-gate.ts` holds the key's refusal and its probe, and each project's;
 *   the backoff is pure (`refusals.ts`);
 * - failures: a project whose polls fail on the API's side backs off, as pure decisions
 *   (`error-backoff.ts`), learnt by its job and planned by its backoff's cost;
 * - settings: `options.ts`.
 */
export * from "./budget.js";
export { Scheduler, type NudgeResult } from "./scheduler.js";
export type { DescribeReason, JobOutcome, PollOutcome, SchedulerJobs } from "./jobs.js";
export type { PollStrategy, SchedulerOptions } from "./options.js";
export * from "./refusals.js";
export * from "./error-backoff.js";
export { TIERS, type Tier } from "./activity-plan.js";
