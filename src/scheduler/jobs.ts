/**
 * What the scheduler asks of the daemon: the jobs it runs for a project (poll, endpoint
 * listing, describe), and what each job reports of how it went, as far as the schedule cares.
 */
import type { FailureKind } from "./error-backoff.js";
import type { RefusalKind } from "./refusals.js";

/**
 * Why a project is described: its first answered poll (`start`), a poll that saw its branches
 * change (`branches`), or a poll that raised alerts (`alert`: their names are wanted; the
 * poll's job reads them itself, before the alerts go).
 */
export type DescribeReason = "start" | "branches" | "alert";

/** How a job went, as far as the schedule cares. */
export interface JobOutcome {
  /** Requests the job made (a describe that found everything known makes none). */
  readonly requests?: number;
  /** The job failed because a request ran out of time: the project is slow. */
  readonly slow?: boolean;
  /** The API refused the project (404, 403) or the account's key (401). */
  readonly refused?: RefusalKind;
  /**
   * The poll failed on the API's side after its retries (a server error, a timeout, an answer
   * that could not be read or broke the contract): the project backs off (`error-backoff.ts`).
   */
  readonly failed?: FailureKind;
  /** The API answered the job's requests: the account's key is good. */
  readonly answered?: boolean;
  /**
   * How long ago (ms, by the API's clock) each operation the poll read was created, new or
   * already known (the control plane's periodic ones aside): the project's recent activity as
   * its log shows it, from its first poll on.
   */
  readonly activityAgesMs?: readonly number[];
  /**
   * The API's time (epoch ms, by its clock) when the poll read them: the ages' reference, and
   * the clock that the activity ages by between polls.
   */
  readonly apiNowMs?: number;
  /** The poll saw an operation that changes endpoints start or end: list them now. */
  readonly endpointsChanged?: boolean;
  /** The poll saw an operation that creates, deletes or moves a branch start or end. */
  readonly branchesChanged?: boolean;
}

/** How a poll went: a job's outcome, with the requests it made and whether operations are open. */
export interface PollOutcome extends JobOutcome {
  readonly requests: number;
  /** The project has operations open now: it is polled in the fast lane. */
  readonly open: boolean;
}

export interface SchedulerJobs {
  /** Polls one project; resolves with the requests it made and whether operations are open. */
  poll(projectId: string, signal: AbortSignal): Promise<PollOutcome>;
  /** Lists one project's endpoints. */
  listEndpoints(projectId: string, signal: AbortSignal): Promise<JobOutcome | undefined>;
  /**
   * Reads what is shown of a project beside its id (its name while unknown, its branches): after
   * its first answered poll, and after one that saw its branches change. What it reads for each
   * `reason` is the job's to decide.
   */
  describe?(
    projectId: string,
    signal: AbortSignal,
    reason: DescribeReason,
  ): Promise<JobOutcome | undefined>;
}
