/**
 * What one poll of a project leads to, decided from its outcome alone: what the observers hear,
 * what is logged, whether the notifier has new alerts to deliver, whether the project's lease
 * was lost, and what the scheduler learns. A pure function: the daemon carries the effects out.
 */
import { ApiError, DEFAULT_BASE_URL } from "../api/index.js";
import { BRANCH_OPERATION_ACTIONS, ENDPOINT_OPERATION_ACTIONS } from "../contract/index.js";
import {
  REFUSAL_CAP_MS,
  type FailureKind,
  type PollOutcome,
  type RefusalKind,
} from "../scheduler/index.js";
import { errorFields } from "../logger.js";
import { LeaseLostError } from "../store/fencing.js";
import { SPAN_QUEUE_LIMIT, type StateFileError } from "../store/index.js";
import { ANOMALY_MEANING, WalkError, type PollResult, type StepOutcome } from "../sync/index.js";
import type { BaseUrlState } from "./base-url-check.js";
import { planTransitionLog, type TransitionLog } from "./transition-log.js";

/** An event for the observers (`DaemonObserver`), by the name of its method. */
export type Report =
  | {
      readonly event: "committed";
      readonly result: PollResult;
      readonly durationSeconds: number;
    }
  | { readonly event: "alertsDropped"; readonly count: number }
  | { readonly event: "spansDropped"; readonly count: number }
  | { readonly event: "blocked"; readonly error: StateFileError }
  | { readonly event: "pollFailed"; readonly error: unknown; readonly durationSeconds: number }
  | { readonly event: "commitFailed"; readonly error: unknown };

export interface LogLine {
  readonly level: "debug" | "info" | "warn" | "error";
  readonly fields: Readonly<Record<string, unknown>>;
  readonly message: string;
}

/** What the scheduler learns from a poll (`SchedulerJobs.poll`). */
export interface StepEffects {
  readonly reports: readonly Report[];
  readonly logs: readonly LogLine[];
  /** The committed poll's transitions, as they are logged (committed polls only). */
  readonly transitions: TransitionLog | undefined;
  /** New alerts are in the outbox: their project's names are read before they go. */
  readonly deliver: boolean;
  /** The store refused the commit: this replica no longer holds the project's lease. */
  readonly leaseLost: LeaseLostError | undefined;
  readonly job: PollOutcome;
}

export interface StepContext {
  readonly projectId: string;
  /** The account the project is polled under. */
  readonly account: string;
  /** The API refused the project before this step (its refusal was logged then). */
  readonly projectRefused: boolean;
  /** The API refused the account's key before this step (logged then). */
  readonly keyRefused: boolean;
  /** The project's polls failed on the API's side before this step (logged then). */
  readonly projectFailing: boolean;
  /**
   * What this step found of the account's base URL (`BaseUrlCheck`), shown without credentials:
   * wrong, found by this step's 404 or known before it; or right again after it was wrong.
   */
  readonly baseUrl?: { readonly url: string; readonly state: BaseUrlState };
  /** How long the step took. */
  readonly durationSeconds: number;
  /** The poll was abandoned (shutdown, or the project was dropped). */
  readonly aborted: boolean;
  /** The project has open operations after the step. */
  readonly open: boolean;
  /** The outbox's limit, for the line that says alerts were dropped. */
  readonly outboxLimit: number;
}

const NONE: Omit<StepEffects, "job"> = {
  reports: [],
  logs: [],
  transitions: undefined,
  deliver: false,
  leaseLost: undefined,
};

export function stepEffects(outcome: StepOutcome, context: StepContext): StepEffects {
  const project = context.projectId;
  switch (outcome.kind) {
    case "committed":
      return committedEffects(outcome, context);
    case "blocked":
      return {
        ...NONE,
        reports: [{ event: "blocked", error: outcome.error }],
        logs: [
          {
            level: "error",
            fields: { project, ...errorFields(outcome.error) },
            message:
              "project state file is unusable; the project is not polled until it is moved aside",
          },
        ],
        job: { requests: 0, open: false },
      };
    case "poll_failed": {
      if (context.aborted) return { ...NONE, job: { requests: 0, open: false } };
      const refused = refusalOf(outcome.error);
      if (refused !== undefined) {
        return {
          ...NONE,
          reports: [
            { event: "pollFailed", error: outcome.error, durationSeconds: context.durationSeconds },
          ],
          logs: refusalStarted(refused, outcome.error, context),
          job: { requests: 1, open: context.open, refused },
        };
      }
      const failed = failureOf(outcome.error);
      return {
        ...NONE,
        reports: [
          { event: "pollFailed", error: outcome.error, durationSeconds: context.durationSeconds },
        ],
        logs:
          failed === undefined
            ? [
                {
                  level: "warn",
                  fields: { project, ...errorFields(outcome.error) },
                  message: "poll failed; nothing committed",
                },
              ]
            : failingStarted(failed, outcome.error, context),
        job: {
          open: context.open,
          slow: isTimeout(outcome.error),
          ...(failed === undefined
            ? { requests: 1 }
            : { requests: attemptsOf(outcome.error), failed }),
        },
      };
    }
    case "commit_failed": {
      const reports: Report[] = [{ event: "commitFailed", error: outcome.error }];
      const requests = outcome.result.requests;
      if (outcome.error instanceof LeaseLostError) {
        // Logged by whoever hears of the lost lease: it knows the replica and the lease.
        return { ...NONE, reports, leaseLost: outcome.error, job: { requests, open: false } };
      }
      return {
        ...NONE,
        reports,
        logs: [
          {
            level: "error",
            fields: { project, ...errorFields(outcome.error) },
            message: "state commit failed; the poll will be repeated",
          },
        ],
        job: { requests, open: context.open },
      };
    }
  }
}

/** A committed poll: its reports, the odd answers it worked around, the end of a refusal. */
function committedEffects(
  outcome: Extract<StepOutcome, { kind: "committed" }>,
  context: StepContext,
): StepEffects {
  const project = context.projectId;
  const { result, dropped } = outcome;
  const reports: Report[] = [
    { event: "committed", result, durationSeconds: context.durationSeconds },
  ];
  const logs: LogLine[] = [];
  if (dropped.length > 0) {
    reports.push({ event: "alertsDropped", count: dropped.length });
    logs.push({
      level: "error",
      fields: { project, dropped: dropped.length, limit: context.outboxLimit },
      message: "the alert outbox is full; new alerts were dropped",
    });
  }
  const droppedSpans = outcome.droppedSpans ?? 0;
  if (droppedSpans > 0) {
    reports.push({ event: "spansDropped", count: droppedSpans });
    logs.push({
      level: "error",
      fields: { project, dropped: droppedSpans, limit: SPAN_QUEUE_LIMIT },
      message:
        "the span queue is full (the collector has not taken spans for long); new spans were dropped",
    });
  }
  for (const { kind, count, example } of result.anomalies) {
    logs.push({
      level: "warn",
      fields: { project, anomaly: kind, count, operation: example },
      message: `the API's answer was odd: ${ANOMALY_MEANING[kind]}`,
    });
  }
  logs.push(...refusalEnded(context));
  logs.push({
    level: "debug",
    fields: {
      project,
      requests: result.requests,
      transitions: result.transitions.length,
      catchingUp: result.catchingUp,
    },
    message: "poll committed",
  });
  return {
    ...NONE,
    reports,
    logs,
    transitions: planTransitionLog(result.transitions),
    deliver: result.alerts.length > 0,
    job: {
      requests: result.requests,
      open: context.open,
      answered: true,
      activityAgesMs: result.activityMs.map((ms) => Math.max(0, result.serverNowMs - ms)),
      apiNowMs: result.serverNowMs,
      endpointsChanged: result.transitions.some((t) => ENDPOINT_OPERATION_ACTIONS.has(t.op.action)),
      branchesChanged: result.transitions.some((t) => BRANCH_OPERATION_ACTIONS.has(t.op.action)),
    },
  };
}

/**
 * What the API refused, by the status of its answer: 401 refuses the account's key; 404 (the
 * project is gone) and 403 (this key may not read it) refuse the project.
 */
export function refusalOf(error: unknown): RefusalKind | undefined {
  if (!(error instanceof ApiError)) return undefined;
  if (error.status === 401) return "key";
  if (error.status === 404 || error.status === 403) return "project";
  return undefined;
}

const CAP_MINUTES = REFUSAL_CAP_MS / 60_000;

/** The line that says a refused key is accepted again (by a poll or a listing). */
export const KEY_ACCEPTED_AGAIN = "the API accepts the account's key again";

/** The line that says the API answers 404 at an account's root (one for all its projects). */
export const WRONG_BASE_URL = `the API answers 404 at its root: the base URL is probably wrong (it should end in /api/v2, as ${DEFAULT_BASE_URL}); the account's projects are polled again backing off to every ${CAP_MINUTES} minutes; fix the URL and restart`;

/** The line that says an account's base URL that answered 404 at its root answers again. */
export const BASE_URL_ANSWERS_AGAIN = "the API answers at the account's base URL again";

/** The one line for an account whose base URL answers 404 at the API's root (`url` as shown). */
export function wrongBaseUrlLine(account: string, url: string, error: unknown): LogLine {
  return {
    level: "error",
    fields: { account, url, ...errorFields(error) },
    message: WRONG_BASE_URL,
  };
}

/**
 * One line when a refusal starts (the polls refused after it log nothing); one for the account
 * when its base URL is wrong, none for its projects.
 */
function refusalStarted(kind: RefusalKind, error: unknown, context: StepContext): LogLine[] {
  const { projectId: project, account, baseUrl } = context;
  if (kind === "key") {
    if (context.keyRefused) return [];
    return [
      {
        level: "error",
        fields: { account, project, ...errorFields(error) },
        message: `the API refuses the account's key: its projects wait, and one poll at a time tries the key again, backing off to every ${CAP_MINUTES} minutes`,
      },
    ];
  }
  if (baseUrl?.state === "found_wrong") return [wrongBaseUrlLine(account, baseUrl.url, error)];
  if (context.projectRefused || baseUrl?.state === "still_wrong") return [];
  return [
    {
      level: "error",
      fields: { account, project, ...errorFields(error) },
      message: `the API refuses the project (gone, or not readable with this key): it is polled again backing off to every ${CAP_MINUTES} minutes, and at once after a reload or discovery`,
    },
  ];
}

/**
 * How a poll failed on the API's side, if it did (its project backs off): a server error (5xx),
 * a timeout, or an answer that could not be read, broke the contract or contradicted the walk's
 * rules. A refusal (401, 403, 404), a 429 (the limiter's), another 4xx and a network error do
 * not count.
 */
export function failureOf(error: unknown): FailureKind | undefined {
  if (error instanceof WalkError) return "invalid_response";
  if (!(error instanceof ApiError)) return undefined;
  switch (error.kind) {
    case "http":
      return error.status !== undefined && error.status >= 500 ? "server_error" : undefined;
    case "timeout":
    case "invalid_response":
      return error.kind;
    case "network":
      return undefined;
  }
}

/** The requests a failed poll made: at least the attempts of the call that failed. */
function attemptsOf(error: unknown): number {
  return error instanceof ApiError ? Math.max(1, error.attempts) : 1;
}

/** The line that says a project's polls fail on the API's side (when the first one does). */
export const PROJECT_FAILING =
  "the project's polls fail on the API's side: it is polled again backing off, each wait twice the last up to poll.errorBackoffMax, and at its interval again once a poll succeeds";

/** The line that says a project's polls succeed again after failing on the API's side. */
export const PROJECT_RECOVERED = "the project's polls succeed again";

/** One warning when a project's polls start failing on the API's side; a debug line after. */
function failingStarted(reason: FailureKind, error: unknown, context: StepContext): LogLine[] {
  const { projectId: project, account } = context;
  const fields = { account, project, reason, ...errorFields(error) };
  return context.projectFailing
    ? [{ level: "debug", fields, message: "poll failed again; the project backs off" }]
    : [{ level: "warn", fields, message: PROJECT_FAILING }];
}

/** The lines when a refusal, or a run of polls failing on the API's side, ends: the poll was answered. */
function refusalEnded(context: StepContext): LogLine[] {
  const { projectId: project, account, baseUrl } = context;
  const lines: LogLine[] = [];
  if (baseUrl?.state === "right_again") {
    lines.push({
      level: "info",
      fields: { account, url: baseUrl.url },
      message: BASE_URL_ANSWERS_AGAIN,
    });
  }
  if (context.keyRefused) {
    lines.push({
      level: "info",
      fields: { account, project },
      message: KEY_ACCEPTED_AGAIN,
    });
  }
  if (context.projectRefused) {
    lines.push({
      level: "info",
      fields: { account, project },
      message: "the API answers for the project again",
    });
  }
  if (context.projectFailing) {
    lines.push({ level: "info", fields: { account, project }, message: PROJECT_RECOVERED });
  }
  return lines;
}

/** A request that ran out of time: its project is slow for the scheduler. */
export function isTimeout(error: unknown): boolean {
  return error instanceof ApiError && error.kind === "timeout";
}
