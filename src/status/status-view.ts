/**
 * The status page's view model: a plain, bounded snapshot of what the exporter knows, built
 * from the shared project views (committed states, blocked projects, the last successful poll,
 * runs of failed polls: the same facts the metrics show) and from a `StatusTracker` that keeps
 * what only the page shows (recent operation failures, the last discovery failure). Each
 * subject's room builds its part (`accounts/`, `alerts/`, `incidents/`, `replica/`, `projects/`);
 * this module puts them together.
 *
 * Cost: one pass over the watched projects per rendering (and one over their names and carried
 * incidents, for the organisations the filter offers and the platform incidents). What a
 * project's committed state says (open operations, outbox, dead letters) is summarised once per
 * state object (states are immutable and replaced on every commit), so an unchanged project
 * costs a lookup. Lists are capped (see `STATUS_LIMITS`): the rows shown are the projects with
 * problems first, then the rest in the daemon's order, up to `projectRows`.
 *
 * Names and filter: each project row carries the project's name, account and organisation as the
 * daemon read them (`ProjectView.info`), each compute its endpoint's name, each dead letter and
 * silenced alert its project's name; all undefined while unknown (the page then shows the id
 * alone). A `StatusFilter` (the page's `?account=` and `?org=`) keeps only the projects of one
 * account and/or organisation: the counts, rows, outbox, dead letters and silenced alerts are
 * then theirs alone.
 *
 * Platform incidents: the open ones (those some watched project's committed state carries, each
 * once), oldest first and capped, with the first of their projects named; they span projects,
 * so the filter keeps them whole.
 *
 * Secrets: the view never holds the API key, sink URLs or signing secrets. It gets the sinks'
 * names only, the API URL without credentials or query, and free texts from outside (operation
 * errors, poll errors) pass through a redactor that knows the secrets, as a last line of defence.
 */
import { displayUrl } from "../config/display-url.js";
import type { SilenceConfig } from "../config/silences.js";
import { addCarried, type CarriedIncident } from "../store/index.js";
import {
  accountStatus,
  discoveryErrorsOf,
  type AccountSource,
  type ProjectBackoffView,
  type AccountStatus,
  type DiscoveryError,
} from "./accounts/account-status.js";
import type { DeadLetterView, SinkStatus } from "./alerts/outbox-status.js";
import {
  silencedRows,
  silenceStatus,
  type SilencedRow,
  type SilenceStatus,
} from "./alerts/silence-status.js";
import { incidentsOf, type IncidentView } from "./incidents/open-incidents.js";
import {
  Organisations,
  selectProjects,
  type FilterStatus,
  type OrganisationChoice,
  type StatusFilter,
} from "./projects/filter.js";
import { projectRows, type StatusProject } from "./projects/project-rows.js";
import { tallyProjects, type StatusCounts } from "./projects/project-tally.js";
import { replicaStatus, type ReplicaSource, type ReplicaStatus } from "./replica/replica-status.js";
import { STATUS_LIMITS, type StatusLimits } from "./shared/limits.js";
import type { StatusSource } from "./shared/source.js";
import { cleaner, type Clean } from "./shared/text.js";
import type { StatusTracker } from "./tracker.js";
import { systemClock } from "../clock.js";

export interface StatusView {
  readonly generatedAtMs: number;
  readonly version: string;
  /** The API base URL without credentials, query or fragment. */
  readonly apiUrl: string;
  /** Why the exporter is not ready, or undefined when it is. */
  readonly notReadyReason: string | undefined;
  /** While it is ready: what stops part of its work (as `/readyz` says it), or undefined. */
  readonly readyProblems: string | undefined;
  /** This replica among those sharing the projects (Postgres state store); else undefined. */
  readonly replica: ReplicaStatus | undefined;
  /** Each account whose discovery failed since the projects last changed (its list stays). */
  readonly discoveryErrors: readonly DiscoveryError[];
  /**
   * The open platform incidents, oldest first; at most `limits.incidentsShown`. Fleet-wide:
   * the filter does not apply to them.
   */
  readonly incidents: readonly IncidentView[];
  /** Open platform incidents, shown or not. */
  readonly incidentsOpen: number;
  readonly counts: StatusCounts;
  /** Problems first; at most `limits.projectRows`. */
  readonly projects: readonly StatusProject[];
  /** Watched projects not in `projects`. */
  readonly projectsOmitted: number;
  /** The accounts, in the configuration's order. */
  readonly accounts: readonly AccountStatus[];
  readonly sinks: readonly SinkStatus[];
  /** Newest first; at most `limits.deadLettersShown`. */
  readonly deadLetters: readonly DeadLetterView[];
  /** The configured silences, as they stand now. */
  readonly silences: readonly SilenceStatus[];
  /** Recently silenced alerts, newest first; at most `limits.silencedKept`. */
  readonly silenced: readonly SilencedRow[];
  /** The compute probe knows of some compute: the page shows its column and counts. */
  readonly computesProbed: boolean;
  /** The filter asked for, undefined when none is (every watched project is shown). */
  readonly filter: FilterStatus | undefined;
  /** The organisations of the watched projects (as far as known), by name then id. */
  readonly organisations: readonly OrganisationChoice[];
  readonly limits: StatusLimits;
}

export interface StatusViewOptions {
  readonly source: StatusSource;
  readonly tracker: StatusTracker;
  readonly version: string;
  /**
   * The API base URL, or the accounts' URLs separated by ", " (each shown without credentials or
   * query).
   */
  readonly apiUrl: string;
  /** The accounts with their schedulers and limiters, read at each view (the daemon's registry). */
  readonly accounts?: () => readonly AccountSource[];
  /** The lease manager, read at each view (undefined: the file store, one replica). */
  readonly replica?: () => ReplicaSource | undefined;
  /** The configured sinks: names and kinds only (never their URLs). */
  readonly sinks: readonly { readonly name: string; readonly kind: string }[];
  /** The configured silences (`silences:`), shown with whether each is open now; none: none. */
  readonly silences?: readonly SilenceConfig[];
  readonly notReadyReason: () => string | undefined;
  /** While it is ready: what stops part of its work. */
  readonly readyProblems?: () => string | undefined;
  /** Applied to every free text from outside (error messages, reasons) before it is shown. */
  readonly redact?: (text: string) => string;
  readonly now?: () => number;
  readonly limits?: Partial<StatusLimits>;
  /** Shows only the projects of an account and/or organisation; none: every watched one. */
  readonly filter?: StatusFilter;
}

/** Builds the page's view: one pass over the watched projects, capped lists. */
export function statusView(options: StatusViewOptions): StatusView {
  const limits: StatusLimits = { ...STATUS_LIMITS, ...options.limits };
  const now = (options.now ?? systemClock.wall)();
  const clean = cleaner(options.redact ?? ((text: string) => text), limits.textChars);
  const { source, tracker } = options;

  // Each account's projects, read once: for its row, the projects' rows and the filter.
  const accounts = (options.accounts?.() ?? []).map((a) => ({ source: a, projects: a.projects() }));
  const accountOf = new Map<string, string>();
  for (const a of accounts) for (const id of a.projects) accountOf.set(id, a.source.name);
  const backoffs = new Map<string, ProjectBackoffView>();
  for (const a of accounts)
    for (const [id, b] of a.source.projectBackoffs?.() ?? []) backoffs.set(id, b);
  const watched = source.watched();
  const { organisations, incidents } = fleetOf(watched, source, limits, clean);
  const { ids, filter } = selectProjects(
    watched,
    options.filter,
    source,
    accounts.map((a) => a.source.name),
    accountOf,
    organisations,
  );
  const tally = tallyProjects(ids, options, limits, now, clean);
  const rows = projectRows(tally.ranked, { accountOf, backoffs }, limits, clean);
  const shown = filter === undefined ? undefined : new Set(ids);

  return {
    generatedAtMs: now,
    version: options.version,
    apiUrl: options.apiUrl
      .split(", ")
      .map((url) => displayUrl(url))
      .join(", "),
    notReadyReason: options.notReadyReason(),
    readyProblems: options.readyProblems?.(),
    replica: replicaStatus(options.replica?.()),
    discoveryErrors: discoveryErrorsOf(tracker.discoveryErrors, clean),
    incidents: incidents.shown,
    incidentsOpen: incidents.open,
    counts: tally.counts,
    projects: rows,
    projectsOmitted: ids.length - rows.length,
    accounts: accounts.map((a) => accountStatus(a.source, a.projects.length, clean)),
    sinks: tally.sinks,
    deadLetters: tally.deadLetters,
    silences: (options.silences ?? []).map((silence) => silenceStatus(silence, now)),
    silenced: silencedRows(tracker.silenced, shown, source, clean),
    computesProbed: tally.computesProbed,
    filter,
    organisations,
    limits,
  };
}

/**
 * What the page shows of every watched project whatever the filter, in one pass: the
 * organisations they are known to belong to (by name then id), and the platform incidents their
 * committed states carry.
 */
function fleetOf(
  ids: readonly string[],
  source: StatusSource,
  limits: StatusLimits,
  clean: Clean,
): {
  organisations: OrganisationChoice[];
  incidents: { open: number; shown: IncidentView[] };
} {
  const organisations = new Organisations();
  const carried = new Map<string, CarriedIncident>();
  for (const id of ids) {
    const project = source.get(id);
    addCarried(carried, project?.state?.incidents);
    organisations.add(project?.info);
  }
  return {
    organisations: organisations.choices(clean),
    incidents: incidentsOf(carried, source, limits, clean),
  };
}
