/**
 * One account's runner: its API client and scheduler, polling the account's share of the watched
 * projects, listing their endpoints and describing them (names, branches). It keeps what the API
 * refuses (the key, a project) and the projects whose polls fail on the API's side, so that each
 * is logged when it starts and when it ends, and the scheduler backs off; and whether its base
 * URL is wrong (the API answers 404 at its root), said once for the account rather than once for
 * each of its projects.
 */
import { isNotFound, type ApiClient } from "../api/index.js";
import type { Clock } from "../clock.js";
import { displayUrl, type AccountPlan, type Config } from "../config/index.js";
import { errorFields, type Logger } from "../logger.js";
import {
  Scheduler,
  type BackoffReason,
  type DescribeReason,
  type JobOutcome,
  type PollOutcome,
} from "../scheduler/index.js";
import type { DaemonObserver, PollOptions, StepOutcome } from "../sync/index.js";
import { baseUrlCheck, type BaseUrlState, type WrongBaseUrl } from "./base-url-check.js";
import type { FleetDirectory } from "./fleet-directory.js";
import type { ProjectRoster } from "./project-roster.js";
import {
  BASE_URL_ANSWERS_AGAIN,
  KEY_ACCEPTED_AGAIN,
  isTimeout,
  refusalOf,
  stepEffects,
  wrongBaseUrlLine,
  type StepEffects,
} from "./step-effects.js";

/** An account as the daemon runs it: its client, and its scheduler planning its budget. */
export interface DaemonAccount {
  readonly name: string;
  /** The API's base address for this account (may hold credentials: show with `displayUrl`). */
  readonly url: string;
  readonly client: ApiClient;
  readonly scheduler: Scheduler;
  /** The projects watched now under this account. */
  projects(): string[];
  /** While the API refuses the account's key: since when, and what it said. */
  keyRefusal(): KeyRefusal | undefined;
  /** While the API answers 404 at the account's root (its base URL is wrong): since when. */
  wrongBaseUrl(): WrongBaseUrl | undefined;
  /** The projects polled with backoff now, by id: why, and when the next try is. */
  projectBackoffs(): ReadonlyMap<string, ShownBackoff>;
}

/** A project polled with backoff, as shown (`Scheduler.projectBackoffs` on the wall clock). */
export interface ShownBackoff {
  readonly reason: BackoffReason;
  /** Tries in a row that were refused or failed. */
  readonly count: number;
  /** When the next try is due (epoch ms). */
  readonly nextTryMs: number;
}

/** The API refuses an account's key (401). */
export interface KeyRefusal {
  /** Wall-clock time of the first refusal in a row (epoch ms). */
  readonly sinceMs: number;
  /** The API's answer. */
  readonly message: string;
}

/** A runner: also polls one of its projects at once (`Daemon.pollAll`). */
export interface AccountRunner extends DaemonAccount {
  poll(projectId: string, signal: AbortSignal): Promise<PollOutcome>;
  /**
   * Hears how the account's discovery went (`error`: it failed): a refused key or a wrong base
   * URL are kept as the polls would keep them, and an answer ends them. The discovery logs its
   * own failure; a wrong base URL found now has its line too.
   */
  discovered(error?: unknown): Promise<void>;
}

export interface RunnerInputs {
  readonly plan: AccountPlan;
  readonly client: ApiClient;
  /** The scheduler's intervals, jitter and headroom. */
  readonly poll: Config["poll"];
  /** The options of the polls that start now (a reload changes them). */
  readonly pollOptions: () => PollOptions;
  /** The outbox's limit, for the line that says alerts were dropped. */
  readonly outboxLimit: number;
  /** The watched projects: the runner polls those of its account. */
  readonly roster: ProjectRoster;
  /** The projects whose log the API refuses now, shared by the runners (a project may move). */
  readonly refusedProjects: Set<string>;
  /** The projects whose polls fail on the API's side now, shared by the runners. */
  readonly failingProjects: Set<string>;
  readonly notify: Required<DaemonObserver>;
  /** Carries out what a poll led to (`effectsApplier`). */
  readonly apply: (projectId: string, effects: StepEffects) => PollOutcome;
  /** The project's outbox holds work for the sinks: their lanes look at it. */
  readonly wake: (projectId: string) => void;
  /** What is shown of the projects beside their ids: the runner describes its own. */
  readonly directory: FleetDirectory;
  readonly logger: Logger;
  readonly clock: Clock;
}

export function createAccountRunner(inputs: RunnerInputs): AccountRunner {
  const { plan, client, roster, refusedProjects, failingProjects, clock } = inputs;
  const baseUrl = baseUrlCheck(client, clock);
  const shownUrl = displayUrl(plan.url);
  /**
   * What a poll's outcome says of the base URL: an answer ends it; a 404 asks the root, unless
   * the project's own refusal was found before (when the root answered).
   */
  const baseUrlAfter = async (
    projectId: string,
    outcome: StepOutcome,
    signal: AbortSignal,
  ): Promise<{ readonly baseUrl?: { url: string; state: BaseUrlState } }> => {
    let state: BaseUrlState | undefined;
    if (outcome.kind === "committed") state = baseUrl.answered() ? "right_again" : undefined;
    else if (
      outcome.kind === "poll_failed" &&
      isNotFound(outcome.error) &&
      !refusedProjects.has(projectId) &&
      !signal.aborted
    ) {
      state = await baseUrl.notFound(signal);
    }
    return state === undefined ? {} : { baseUrl: { url: shownUrl, state } };
  };
  /** Set while the API refuses the key (what the metrics and the status page show). */
  let keyRefusal: KeyRefusal | undefined;
  const noteKey = (outcome: JobOutcome | undefined, error?: unknown) => {
    if (outcome?.refused === "key" && keyRefusal === undefined) {
      const message = error instanceof Error ? error.message : String(error);
      keyRefusal = { sinceMs: clock.wall(), message };
    } else if (outcome?.answered === true) keyRefusal = undefined;
  };

  /** The API answered a read besides the polls: a refused key or a wrong base URL ends. */
  const answered = (fields: Readonly<Record<string, unknown>>) => {
    // Answered before any poll was: this read ends the refusal, and says so.
    if (keyRefusal !== undefined)
      inputs.logger.info({ account: plan.name, ...fields }, KEY_ACCEPTED_AGAIN);
    noteKey({ answered: true });
    if (baseUrl.answered()) {
      inputs.logger.info({ account: plan.name, url: shownUrl }, BASE_URL_ANSWERS_AGAIN);
    }
  };

  /**
   * A read besides the polls (a listing): an answer ends a refusal of the key; a refusal is not
   * logged (the polls log it) and, with `refusals`, is handed to the scheduler; any other
   * failure is logged as `what` failed.
   */
  const read = async (
    projectId: string,
    signal: AbortSignal,
    kind: {
      readonly what: string;
      readonly refusals: boolean;
      readonly failed?: (error: unknown) => void;
    },
    run: () => Promise<void>,
  ): Promise<JobOutcome | undefined> => {
    try {
      await run();
      answered({ project: projectId });
      return { slow: false, answered: true };
    } catch (error) {
      if (signal.aborted) return undefined;
      kind.failed?.(error);
      const refused = refusalOf(error);
      // A refusal is logged by the polls (when one starts and when it ends).
      if (refused !== undefined) {
        if (!kind.refusals) return {};
        noteKey({ refused }, error);
        return { refused };
      }
      inputs.logger.warn({ project: projectId, ...errorFields(error) }, `${kind.what} failed`);
      return { slow: isTimeout(error) };
    }
  };

  const listEndpoints = (projectId: string, signal: AbortSignal) =>
    read(
      projectId,
      signal,
      {
        what: "endpoint listing",
        refusals: true,
        failed: (error) => {
          inputs.notify.endpointsFailed(projectId, error);
        },
      },
      async () => {
        inputs.notify.endpointsListed(projectId, await client.listEndpoints(projectId, { signal }));
      },
    );

  // What the API refuses is left to the polls: a describe follows a poll in the same job, and
  // its refusal would hold the account's other projects before their own polls were refused.
  const describe = async (projectId: string, signal: AbortSignal, reason: DescribeReason) => {
    let requests = 0;
    const outcome = await read(
      projectId,
      signal,
      { what: "reading the project's name and branches", refusals: false },
      async () => {
        requests = await inputs.directory.describe(projectId, plan.name, client, signal, reason);
      },
    );
    if (outcome === undefined) return undefined;
    // A failed read made at least the request that failed.
    return { ...outcome, requests: outcome.answered === true ? requests : Math.max(requests, 1) };
  };

  const pollOnce = async (projectId: string, signal: AbortSignal): Promise<PollOutcome> => {
    const started = clock.monotonic();
    const outcome = await roster.step(projectId, clock.wall(), inputs.pollOptions(), signal);
    if (outcome === undefined) return { requests: 0, open: false };
    const durationSeconds = (clock.monotonic() - started) / 1000;
    const baseUrlNow = await baseUrlAfter(projectId, outcome, signal);
    const effects = stepEffects(outcome, {
      projectId,
      account: plan.name,
      // Read when the poll ends: of polls that were refused together, the first says so.
      projectRefused: refusedProjects.has(projectId),
      keyRefused: keyRefusal !== undefined,
      projectFailing: failingProjects.has(projectId),
      ...baseUrlNow,
      durationSeconds,
      aborted: signal.aborted,
      open: roster.sync(projectId)?.hasOpenOperations() ?? false,
      outboxLimit: inputs.outboxLimit,
    });
    noteKey(effects.job, outcome.kind === "poll_failed" ? outcome.error : undefined);
    // A wrong base URL refuses the account, not the project: no line when the project answers.
    const wrongUrl = baseUrl.wrong() !== undefined;
    if (effects.job.refused === "project" && !wrongUrl) refusedProjects.add(projectId);
    else if (effects.job.answered === true) refusedProjects.delete(projectId);
    if (effects.job.failed !== undefined) failingProjects.add(projectId);
    else if (effects.job.answered === true || effects.job.refused !== undefined) {
      failingProjects.delete(projectId);
    }
    // The project's first alerts want its branches' names: read them before the alerts go.
    if (effects.deliver && inputs.directory.branchesUnread(projectId)) {
      const described = await describe(projectId, signal, "alert");
      const requests = effects.job.requests + (described?.requests ?? 0);
      return inputs.apply(projectId, { ...effects, job: { ...effects.job, requests } });
    }
    return inputs.apply(projectId, effects);
  };

  const poll = async (projectId: string, signal: AbortSignal): Promise<PollOutcome> => {
    try {
      return await pollOnce(projectId, signal);
    } finally {
      // Alerts raised now, or left pending by a run before (a state just loaded, a lease valid
      // again): the sinks' lanes look at this project alone, once its names are read.
      if (roster.hasDeliveryWork(projectId)) inputs.wake(projectId);
    }
  };

  // Each account plans its own projects within its own rate limit (the API's is per account).
  const scheduler = new Scheduler(
    {
      baseIntervalSeconds: inputs.poll.interval,
      fastIntervalSeconds: inputs.poll.fastInterval,
      endpointsIntervalSeconds: inputs.poll.endpointsInterval,
      jitter: inputs.poll.jitter,
      headroom: inputs.poll.headroom,
      requestsPerMinute: plan.requestsPerMinute,
      maxConcurrent: plan.concurrency,
      strategy: inputs.poll.strategy,
      maxIntervalSeconds: inputs.poll.maxInterval === "auto" ? undefined : inputs.poll.maxInterval,
      activeWindowSeconds: inputs.poll.activeWindow,
      errorBackoffMaxSeconds: inputs.poll.errorBackoffMax,
      monotonic: () => clock.monotonic(),
    },
    { poll, listEndpoints, describe },
  );
  return {
    name: plan.name,
    url: plan.url,
    client,
    scheduler,
    projects: () => roster.idsOf(plan.name),
    keyRefusal: () => keyRefusal,
    wrongBaseUrl: () => baseUrl.wrong(),
    projectBackoffs: () => {
      // The scheduler's times are monotonic: shown on the wall clock, as of now.
      const offsetMs = clock.wall() - clock.monotonic();
      const shown = new Map<string, ShownBackoff>();
      for (const [id, { reason, count, retryAtMs }] of scheduler.projectBackoffs()) {
        shown.set(id, { reason, count, nextTryMs: retryAtMs + offsetMs });
      }
      return shown;
    },
    poll,
    async discovered(error) {
      if (error === undefined) {
        answered({});
        return;
      }
      if (refusalOf(error) === "key") noteKey({ refused: "key" }, error);
      if (isNotFound(error) && (await baseUrl.notFound()) === "found_wrong") {
        const line = wrongBaseUrlLine(plan.name, shownUrl, error);
        inputs.logger[line.level](line.fields, line.message);
      }
    },
  };
}
