/**
 * The project rows of the status page: where each project stands (its health), its latest
 * successful poll or run of failed ones (and, while it is polled with backoff, why and when it is
 * tried next), its open operations, the recent failures the tracker
 * remembers, its alerts and computes; with its name, account and organisation as the daemon
 * read them (`ProjectView.info`), undefined while unknown (the page then shows the id alone).
 * Rows are built for the first `projectRows` of the ranked projects only.
 */
import type { ProjectState, StateFileProblem } from "../../store/index.js";
import type { ProjectView } from "../../sync/index.js";
import type { ProjectBackoffView } from "../accounts/account-status.js";
import type { OutboxSummary } from "../alerts/outbox-status.js";
import type { StatusLimits } from "../shared/limits.js";
import { messageOf, nameOrUndefined, type Clean } from "../shared/text.js";
import { computeRows, type ComputeStatus } from "./compute-status.js";
import type { OpenOperations, OpenOperationView } from "./open-operations.js";

/** Where a project stands, worst first. */
export type ProjectHealth = "blocked" | "poll_failing" | "catching_up" | "waiting" | "ok";

export const PROJECT_HEALTHS: readonly ProjectHealth[] = [
  "blocked",
  "poll_failing",
  "catching_up",
  "waiting",
  "ok",
];

/** An operation that arrived at `failed` or `error`, as a poll found it. */
export interface FailureView {
  readonly operationId: string;
  readonly action: string;
  readonly status: string;
  readonly failuresCount: number;
  /** The operation's error text (from outside: escape it). */
  readonly error: string | undefined;
  /** When the operation failed, as the API reports it (epoch ms). */
  readonly atMs: number;
  /** When the exporter found out (epoch ms). */
  readonly detectedAtMs: number;
}

/** What the tracker remembers about one project. */
export interface TrackedProject {
  /** Newest first, at most `failuresKept`. */
  readonly failures: readonly FailureView[];
}

export interface StatusProject {
  readonly projectId: string;
  /** The project's name (from outside: escape it); undefined while unknown. */
  readonly name: string | undefined;
  /** The account it is polled under, when known. */
  readonly account: string | undefined;
  /** Its organisation's id and name (from outside), when it belongs to one and they are known. */
  readonly orgId: string | undefined;
  readonly orgName: string | undefined;
  readonly health: ProjectHealth;
  /** Blocked: the state file and what is wrong with it. */
  readonly blocked: { readonly file: string; readonly problem: StateFileProblem } | undefined;
  /** Polled with backoff instead of at its interval: why, and when it is tried next. */
  readonly backoff: ProjectBackoffView | undefined;
  /** Poll (or commit) failing: since when, how many times in a row, the latest error. */
  readonly failing:
    | {
        readonly sinceMs: number;
        readonly count: number;
        readonly message: string;
        readonly commit: boolean;
      }
    | undefined;
  /** The latest successful poll (epoch ms), if any. */
  readonly lastSuccessMs: number | undefined;
  /** `lastSuccessMs` is the state file's last commit, from before this process started. */
  readonly lastSuccessBeforeStart: boolean;
  readonly openCount: number;
  readonly stuckCount: number;
  /** Stuck first, then oldest first; capped. */
  readonly open: readonly OpenOperationView[];
  /** Failures remembered (at most `failuresKept`). */
  readonly failureCount: number;
  /** Newest first; capped. */
  readonly failures: readonly FailureView[];
  /** Outbox entries still pending for some sink. */
  readonly pending: number;
  readonly deadLetters: number;
  /** New alerts dropped because the outbox was full (since start). */
  readonly droppedAlerts: number;
  /** Computes the probe knows of (none while it is off); capped, problems first. */
  readonly computes: readonly ComputeStatus[];
  readonly computeCount: number;
}

/** What the page knows of one project: its view, committed state, tracked failures, summaries. */
export interface ProjectFacts {
  readonly project: ProjectView | undefined;
  readonly state: ProjectState | undefined;
  readonly tracked: TrackedProject | undefined;
  readonly open: OpenOperations;
  readonly outbox: OutboxSummary;
}

export function healthOf({ project, state }: ProjectFacts): ProjectHealth {
  if (project?.blocked !== undefined) return "blocked";
  if (project?.failing !== undefined) return "poll_failing";
  if (state?.segment != null) return "catching_up";
  if (project?.lastSuccessMs === undefined || project.lastSuccessBeforeStart) return "waiting";
  return "ok";
}

/** What the accounts say of the projects: which each is polled under, and their backoffs. */
export interface AccountFacts {
  readonly accountOf: ReadonlyMap<string, string>;
  readonly backoffs: ReadonlyMap<string, ProjectBackoffView>;
}

/** The rows of the ranked projects (problems first), up to `limits.projectRows`. */
export function projectRows(
  ranked: readonly (readonly { id: string; project: ProjectFacts }[])[],
  accounts: AccountFacts,
  limits: StatusLimits,
  clean: Clean,
): StatusProject[] {
  const rows: StatusProject[] = [];
  for (const bucket of ranked) {
    for (const { id, project } of bucket) {
      if (rows.length >= limits.projectRows) break;
      const account = { name: accounts.accountOf.get(id), backoff: accounts.backoffs.get(id) };
      rows.push(projectRow(id, project, account, limits, clean));
    }
  }
  return rows;
}

function projectRow(
  projectId: string,
  facts: ProjectFacts,
  account: { readonly name: string | undefined; readonly backoff: ProjectBackoffView | undefined },
  limits: StatusLimits,
  clean: Clean,
): StatusProject {
  const { project, tracked, open, outbox } = facts;
  const blocked = project?.blocked;
  const failing = project?.failing;
  const info = project?.info;
  return {
    projectId,
    name: nameOrUndefined(info?.name, clean),
    account: account.name ?? info?.account,
    orgId: info?.orgId,
    orgName: nameOrUndefined(info?.orgName, clean),
    health: healthOf(facts),
    blocked:
      blocked === undefined ? undefined : { file: clean(blocked.file), problem: blocked.problem },
    backoff: account.backoff,
    failing:
      failing === undefined
        ? undefined
        : {
            sinceMs: failing.sinceMs,
            count: failing.count,
            message: clean(messageOf(failing.error)),
            commit: failing.commit,
          },
    lastSuccessMs: project?.lastSuccessMs,
    lastSuccessBeforeStart: project?.lastSuccessBeforeStart ?? false,
    openCount: open.openCount,
    stuckCount: open.stuckCount,
    // Ages on the API's clock: its timestamps moved onto ours.
    open:
      project === undefined || project.clockOffsetMs === 0
        ? open.open
        : open.open.map((o) => ({ ...o, createdAtMs: o.createdAtMs - project.clockOffsetMs })),
    failureCount: tracked?.failures.length ?? 0,
    failures: (tracked?.failures ?? []).slice(0, limits.failuresShown).map((f) => ({
      ...f,
      error: f.error === undefined ? undefined : clean(f.error),
    })),
    pending: outbox.pending,
    deadLetters: outbox.deadLetters,
    droppedAlerts: project?.droppedAlerts ?? 0,
    computes: computeRows(project, limits, clean),
    computeCount: project?.computes?.size ?? 0,
  };
}
