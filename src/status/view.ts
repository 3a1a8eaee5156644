/**
 * The status page's view model: a plain, bounded snapshot of what the exporter knows, built
 * from the shared project views (committed states, blocked projects, the last successful poll,
 * runs of failed polls: the same facts the metrics show) and from a `StatusTracker` that keeps
 * what only the page shows (recent operation failures, the last discovery failure).
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
import { windowState } from "../alerts/rules/silence-window.js";
import { displayUrl } from "../config/display-url.js";
import type { SilenceConfig, SilenceWindow } from "../config/silences.js";
import { isEndStatus, maxConnectionsFor } from "../contract/index.js";
import {
  addCarried,
  type CarriedIncident,
  type DeadLetter,
  type ProjectState,
  type StateFileProblem,
} from "../store/index.js";
import type {
  AdviceReason,
  ComputeProbeState,
  ProbeFailureReason,
  ProjectView,
} from "../sync/index.js";
import type { StatusTracker, TrackedProject } from "./tracker.js";
import { systemClock } from "../clock.js";

/** The bounds that keep the page (and the tracker's memory) small at any number of projects. */
export interface StatusLimits {
  /** Recent failures remembered per project (newest kept). */
  readonly failuresKept: number;
  /** Project rows rendered; the others are counted in the summary only. */
  readonly projectRows: number;
  /** Open operations listed per project row. */
  readonly openShown: number;
  /** Recent failures listed per project row. */
  readonly failuresShown: number;
  /** Most recent dead letters listed (all projects). */
  readonly deadLettersShown: number;
  /** Longest free text (error messages) shown, in characters. */
  readonly textChars: number;
  /** A project whose newest failure is younger than this is listed among the problems. */
  readonly recentFailureMs: number;
  /** Recently silenced alerts remembered and listed (all projects, newest kept). */
  readonly silencedKept: number;
  /** Computes listed per project row (those with a failing probe or advice first). */
  readonly computesShown: number;
  /** Open platform incidents shown (the oldest); the others are counted. */
  readonly incidentsShown: number;
  /** Projects listed per platform incident (the first to join); the others are counted. */
  readonly incidentProjectsShown: number;
}

export const STATUS_LIMITS: StatusLimits = {
  failuresKept: 20,
  projectRows: 200,
  openShown: 5,
  failuresShown: 5,
  deadLettersShown: 10,
  textChars: 500,
  recentFailureMs: 3_600_000,
  silencedKept: 20,
  computesShown: 10,
  incidentsShown: 5,
  incidentProjectsShown: 20,
};

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

/** An alert that a silence kept from one or more sinks. */
export interface SilencedView {
  readonly projectId: string;
  readonly kind: string;
  readonly operationId: string;
  readonly action: string;
  readonly status: string;
  readonly sinks: readonly string[];
  /** The silence's name. */
  readonly silence: string;
  /** When the poll that raised it was committed (epoch ms). */
  readonly atMs: number;
}

/** A silenced alert as the page lists it: with its project's name, once known. */
export interface SilencedRow extends SilencedView {
  readonly projectName: string | undefined;
}

/** A configured silence, and whether its window is open now. */
export interface SilenceStatus {
  readonly name: string;
  readonly comment: string | undefined;
  readonly window: SilenceWindow;
  /** The sinks it covers; undefined: all. */
  readonly sinks: readonly string[] | undefined;
  /** Its match conditions, as `projects: a, b; kinds: operation_failed` (empty: every alert). */
  readonly conditions: string;
  readonly active: boolean;
  /** Open: when it closes (undefined: occurrences run on). Closed: when it next opens. */
  readonly untilMs: number | undefined;
  readonly nextMs: number | undefined;
}

export interface OpenOperationView {
  readonly id: string;
  readonly action: string;
  readonly status: string;
  readonly createdAtMs: number;
  readonly stuck: boolean;
}

/** What the compute probe knows of one endpoint's compute. */
export interface ComputeStatus {
  readonly endpointId: string;
  /** The endpoint's name from its latest listing (from outside: escape it), once known. */
  readonly endpointName: string | undefined;
  readonly state: ComputeProbeState;
  /** The latest reading of the compute's current start, if any. */
  readonly reading:
    | {
        readonly atMs: number;
        readonly startedAtMs: number;
        /** Percent; undefined before the cache has been read from. */
        readonly hitRatio: number | undefined;
        readonly connections: number;
        readonly maxConnections: number | undefined;
      }
    | undefined;
  /** The current run of failed probes: why, since when, how many, the latest message. */
  readonly failure:
    | {
        readonly reason: ProbeFailureReason;
        readonly message: string;
        readonly sinceMs: number;
        readonly count: number;
      }
    | undefined;
  readonly advised: readonly AdviceReason[];
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

/** An account as the page reads it: the daemon's `DaemonAccount` satisfies it. */
export interface AccountSource {
  readonly name: string;
  readonly url: string;
  readonly scheduler: {
    readonly budget: { readonly stretch: number };
    tierIntervalSeconds(tier: "fast" | "active" | "idle"): number;
  };
  readonly client: { limiterStats(): { readonly tokensRemaining: number } };
  projects(): readonly string[];
  /** While the API refuses the account's key: since when (epoch ms), and what it said. */
  keyRefusal(): { readonly sinceMs: number; readonly message: string } | undefined;
  /** While the API answers 404 at the account's root (its base URL is wrong): since when. */
  wrongBaseUrl?(): { readonly sinceMs: number } | undefined;
}

/**
 * What the lease manager tells of this replica among the others (Postgres state store);
 * `LeaseManager` satisfies it. The counts are those of its latest heartbeat.
 */
export interface ReplicaSource {
  readonly replicaId: string;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  heldProjects(): readonly string[];
  readonly liveReplicas: number | undefined;
  readonly targetProjects: number | undefined;
  readonly fleetProjects: number | undefined;
  readonly unownedProjects: number | undefined;
  /** Ages on the monotonic clock. */
  leaseAges(): {
    readonly sinceRenewalMs: number | undefined;
    readonly oldestHeldMs: number | undefined;
    readonly newestHeldMs: number | undefined;
  };
}

/**
 * This replica among those sharing the projects: its id, the live replicas, what it holds of
 * the fleet, the projects no live replica holds, and how old its leases are. Counts are
 * undefined before its first heartbeat; ages are on the monotonic clock.
 */
export interface ReplicaStatus {
  readonly id: string;
  /** Projects it holds now. */
  readonly held: number;
  /** Its even share of the fleet. */
  readonly target: number | undefined;
  /** Projects the replicas share: the fleet's total. */
  readonly fleet: number | undefined;
  /** Live replicas, this one included. */
  readonly live: number | undefined;
  /** Projects with no live holder, by the database's clock. */
  readonly unowned: number | undefined;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  /** Since its latest successful heartbeat, which renewed its leases. */
  readonly sinceRenewalMs: number | undefined;
  /** Since it claimed the oldest and the newest of the leases it holds. */
  readonly oldestHeldMs: number | undefined;
  readonly newestHeldMs: number | undefined;
}

/**
 * An open platform incident: failures of one action, in one region, with one error class, across
 * many projects (`alerts/rules/incidents.ts`), as the project carrying it committed it.
 */
export interface IncidentView {
  readonly id: string;
  readonly action: string;
  readonly regionId: string;
  /** The error text with ids and numbers taken out (from outside: escape it). */
  readonly errorClass: string;
  /** When its first failure was detected (epoch ms). */
  readonly firstAtMs: number;
  /** When its latest failure was detected (epoch ms). */
  readonly lastAtMs: number;
  readonly failures: number;
  /** Its projects, watched or not. */
  readonly projectCount: number;
  /**
   * The first projects to join (at most `limits.incidentProjectsShown`), each with its name
   * (from outside: escape it) once known.
   */
  readonly projects: readonly { readonly id: string; readonly name: string | undefined }[];
}

/** One account's row: its projects and its own request budget. */
export interface AccountStatus {
  readonly name: string;
  /** The API address without credentials, query or fragment. */
  readonly url: string;
  readonly projects: number;
  /** Factor its intervals are stretched by to fit its rate limit (1: they fit). */
  readonly stretch: number;
  /** Seconds between polls of its projects with open, recent and no operations. */
  readonly intervals: { readonly fast: number; readonly active: number; readonly idle: number };
  /** Requests its limiter would let through at once now. */
  readonly tokens: number;
  /** While the API refuses its key: since when (epoch ms), and what it said. */
  readonly keyRefusal: { readonly sinceMs: number; readonly message: string } | undefined;
  /** While the API answers 404 at its root (its base URL is wrong): since when (epoch ms). */
  readonly wrongBaseUrlSinceMs: number | undefined;
}

export interface SinkStatus {
  readonly name: string;
  /** Undefined for a sink that is not configured (any more) but still has pending alerts. */
  readonly kind: string | undefined;
  readonly pending: number;
  readonly oldestPendingMs: number | undefined;
  readonly deadLetters: number;
}

export interface DeadLetterView {
  readonly projectId: string;
  /** The project's name, once known. */
  readonly projectName: string | undefined;
  readonly sink: string;
  readonly reason: string;
  readonly atMs: number;
  readonly alertKind: string;
  readonly operationId: string;
  readonly action: string;
  readonly status: string;
}

export interface StatusCounts {
  readonly projects: number;
  readonly health: Readonly<Record<ProjectHealth, number>>;
  readonly open: number;
  readonly stuck: number;
  /** Projects with a failure younger than `recentFailureMs`. */
  readonly recentlyFailing: number;
  readonly pending: number;
  readonly deadLetters: number;
  /** Computes whose latest probe failed. */
  readonly computesFailing: number;
  /** Computes for which a larger compute is advised. */
  readonly computesAdvised: number;
}

/** Which projects the page shows (`?account=` and `?org=`); none given: every watched one. */
export interface StatusFilter {
  /** The configured account's name. */
  readonly account?: string | undefined;
  /** The organisation's id. */
  readonly orgId?: string | undefined;
}

/** The filter the view was built with, and what it found. */
export interface FilterStatus {
  readonly account: string | undefined;
  readonly orgId: string | undefined;
  /** The organisation's name, when known. */
  readonly orgName: string | undefined;
  /** The filter names an account that is not configured: no project matches. */
  readonly unknownAccount: boolean;
  /** No watched project is known to belong to the organisation: none matches. */
  readonly unknownOrg: boolean;
  /** Every watched project, matching or not (the matches are `counts.projects`). */
  readonly watched: number;
}

/** An organisation some watched project is known to belong to: a choice of the filter. */
export interface OrganisationChoice {
  readonly id: string;
  /** Its name (from outside), once read. */
  readonly name: string | undefined;
  /** Watched projects known to belong to it. */
  readonly projects: number;
}

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
  readonly discoveryErrors: readonly {
    readonly account: string;
    readonly atMs: number;
    readonly message: string;
  }[];
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

/** What the view reads of each project: the shared `ProjectViews` satisfies it. */
export interface StatusSource {
  /** The watched projects, in the daemon's order. */
  watched(): readonly string[];
  get(projectId: string): ProjectView | undefined;
}

/** What one committed state says, computed once per state object. */
interface StateSummary {
  readonly openCount: number;
  readonly stuckCount: number;
  readonly open: readonly OpenOperationView[];
  readonly pending: number;
  readonly pendingBySink: ReadonlyMap<string, { count: number; oldestMs: number }>;
  readonly deadLetters: number;
  readonly deadBySink: ReadonlyMap<string, number>;
  /** The newest dead letters, newest first (at most the limit shown). */
  readonly recentDead: readonly DeadLetter[];
}

const summaries = new WeakMap<ProjectState, StateSummary>();
const EMPTY_SUMMARY: StateSummary = {
  openCount: 0,
  stuckCount: 0,
  open: [],
  pending: 0,
  pendingBySink: new Map(),
  deadLetters: 0,
  deadBySink: new Map(),
  recentDead: [],
};

function summarise(state: ProjectState | undefined, limits: StatusLimits): StateSummary {
  if (state === undefined) return EMPTY_SUMMARY;
  const cached = summaries.get(state);
  if (cached !== undefined) return cached;
  const openOps = state.tracked.filter((t) => !isEndStatus(t.status));
  const open = openOps
    .map((t) => ({
      id: t.id,
      action: t.action,
      status: t.status,
      createdAtMs: t.createdAtMs,
      stuck: t.stuck,
    }))
    .sort((a, b) => Number(b.stuck) - Number(a.stuck) || a.createdAtMs - b.createdAtMs)
    .slice(0, limits.openShown);
  const pendingBySink = new Map<string, { count: number; oldestMs: number }>();
  for (const entry of state.outbox) {
    for (const sink of entry.pending) {
      const s = pendingBySink.get(sink);
      if (s === undefined) pendingBySink.set(sink, { count: 1, oldestMs: entry.createdAtMs });
      else {
        s.count += 1;
        s.oldestMs = Math.min(s.oldestMs, entry.createdAtMs);
      }
    }
  }
  const deadBySink = new Map<string, number>();
  for (const d of state.deadLetters) deadBySink.set(d.sink, (deadBySink.get(d.sink) ?? 0) + 1);
  const summary: StateSummary = {
    openCount: openOps.length,
    stuckCount: openOps.filter((t) => t.stuck).length,
    open,
    pending: state.outbox.length,
    pendingBySink,
    deadLetters: state.deadLetters.length,
    deadBySink,
    // Dead letters are appended: the newest are at the end.
    recentDead: state.deadLetters.slice(-limits.deadLettersShown).reverse(),
  };
  summaries.set(state, summary);
  return summary;
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
  const redact = options.redact ?? ((text: string) => text);
  const clean = (text: string): string => truncate(stripControls(redact(text)), limits.textChars);
  const { source, tracker } = options;

  // Each account's projects, read once: for its row, the projects' rows and the filter.
  const accounts = (options.accounts?.() ?? []).map((a) => ({ source: a, projects: a.projects() }));
  const accountOf = new Map<string, string>();
  for (const a of accounts) for (const id of a.projects) accountOf.set(id, a.source.name);
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
  const { health, sinks, recentDead, ranked } = tally;

  const rows: StatusProject[] = [];
  for (const bucket of ranked) {
    for (const { id, project } of bucket) {
      if (rows.length >= limits.projectRows) break;
      rows.push(projectRow(id, project, accountOf.get(id), limits, clean));
    }
  }
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
    discoveryErrors: [...tracker.discoveryErrors].map(([account, failure]) => ({
      account,
      atMs: failure.atMs,
      message: clean(messageOf(failure.error)),
    })),
    incidents: incidents.shown,
    incidentsOpen: incidents.open,
    counts: {
      projects: ids.length,
      health,
      open: tally.open,
      stuck: tally.stuck,
      recentlyFailing: tally.recentlyFailing,
      pending: tally.pending,
      deadLetters: tally.deadLetters,
      computesFailing: tally.computesFailing,
      computesAdvised: tally.computesAdvised,
    },
    projects: rows,
    projectsOmitted: ids.length - rows.length,
    accounts: accounts.map((a) => accountStatus(a.source, a.projects.length, clean)),
    sinks: [...sinks].map(([name, s]) => ({
      name,
      kind: s.kind,
      pending: s.pending,
      oldestPendingMs: s.pending > 0 ? s.oldestMs : undefined,
      deadLetters: s.dead,
    })),
    deadLetters: recentDead.items(),
    silences: (options.silences ?? []).map((silence) => silenceStatus(silence, now)),
    silenced: tracker.silenced
      .filter((a) => shown?.has(a.projectId) ?? true)
      .map((a) => ({ ...a, projectName: projectNameOf(source, a.projectId, clean) })),
    computesProbed: tally.computesProbed,
    filter,
    organisations,
    limits,
  };
}

function replicaStatus(source: ReplicaSource | undefined): ReplicaStatus | undefined {
  if (source === undefined) return undefined;
  return {
    id: source.replicaId,
    held: source.heldProjects().length,
    target: source.targetProjects,
    fleet: source.fleetProjects,
    live: source.liveReplicas,
    unowned: source.unownedProjects,
    leaseMs: source.leaseMs,
    heartbeatMs: source.heartbeatMs,
    ...source.leaseAges(),
  };
}

/** A project's name, cleaned as every text from outside is; undefined while unknown. */
function projectNameOf(
  source: StatusSource,
  projectId: string,
  clean: (text: string) => string,
): string | undefined {
  return nameOrUndefined(source.get(projectId)?.info?.name, clean);
}

function nameOrUndefined(
  name: string | undefined,
  clean: (text: string) => string,
): string | undefined {
  return name === undefined || name === "" ? undefined : clean(name);
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
  clean: (text: string) => string,
): {
  organisations: OrganisationChoice[];
  incidents: { open: number; shown: IncidentView[] };
} {
  const orgs = new Map<string, { name: string | undefined; projects: number }>();
  const carried = new Map<string, CarriedIncident>();
  for (const id of ids) {
    const project = source.get(id);
    addCarried(carried, project?.state?.incidents);
    const info = project?.info;
    if (info?.orgId === undefined) continue;
    const org = orgs.get(info.orgId);
    if (org === undefined) orgs.set(info.orgId, { name: info.orgName, projects: 1 });
    else {
      org.projects += 1;
      org.name ??= info.orgName;
    }
  }
  const key = (o: OrganisationChoice) => (o.name ?? o.id).toLowerCase();
  const organisations = [...orgs]
    .map(([id, o]) => ({ id, name: nameOrUndefined(o.name, clean), projects: o.projects }))
    .sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.id < b.id ? -1 : 1));
  return { organisations, incidents: incidentsOf(carried, source, limits, clean) };
}

/** The oldest open incidents (at most the limit), each with its first projects named. */
function incidentsOf(
  carried: ReadonlyMap<string, CarriedIncident>,
  source: StatusSource,
  limits: StatusLimits,
  clean: (text: string) => string,
): { open: number; shown: IncidentView[] } {
  // The largest keys of the negated start: the oldest, oldest first.
  const oldest = new NewestFirst<CarriedIncident>(limits.incidentsShown);
  for (const incident of carried.values()) oldest.add(-incident.firstAtMs, incident);
  const shown = oldest.items().map((incident) => ({
    id: incident.id,
    action: incident.action,
    regionId: incident.regionId,
    errorClass: clean(incident.errorClass),
    firstAtMs: incident.firstAtMs,
    lastAtMs: incident.lastAtMs,
    failures: incident.failures,
    projectCount: Math.max(incident.projectCount, incident.projects.length),
    projects: incident.projects
      .slice(0, limits.incidentProjectsShown)
      .map((id) => ({ id, name: projectNameOf(source, id, clean) })),
  }));
  return { open: carried.size, shown };
}

/**
 * The watched projects the filter keeps, in the daemon's order. A project's account is the one
 * it is polled under (known from the start); its organisation is known once it was described.
 */
function selectProjects(
  watched: readonly string[],
  wanted: StatusFilter | undefined,
  source: StatusSource,
  accounts: readonly string[],
  accountOf: ReadonlyMap<string, string>,
  organisations: readonly OrganisationChoice[],
): { ids: readonly string[]; filter: FilterStatus | undefined } {
  const account = wanted?.account;
  const orgId = wanted?.orgId;
  if (account === undefined && orgId === undefined) return { ids: watched, filter: undefined };
  const org = orgId === undefined ? undefined : organisations.find((o) => o.id === orgId);
  const ids = watched.filter((id) => {
    const info = source.get(id)?.info;
    if (account !== undefined && (accountOf.get(id) ?? info?.account) !== account) return false;
    return orgId === undefined || info?.orgId === orgId;
  });
  // Without the accounts (a view built before the daemon), the described projects say theirs.
  const knownAccount =
    account === undefined ||
    (accounts.length > 0
      ? accounts.includes(account)
      : watched.some((id) => source.get(id)?.info?.account === account));
  return {
    ids,
    filter: {
      account,
      orgId,
      orgName: org?.name,
      unknownAccount: !knownAccount,
      unknownOrg: orgId !== undefined && org === undefined,
      watched: watched.length,
    },
  };
}

/** A sink's pending alerts and dead letters, added up over the projects. */
interface SinkTally {
  kind: string | undefined;
  pending: number;
  oldestMs: number;
  dead: number;
}

/** What one pass over the watched projects adds up. */
interface ProjectTally {
  readonly health: Record<ProjectHealth, number>;
  readonly open: number;
  readonly stuck: number;
  readonly recentlyFailing: number;
  readonly pending: number;
  readonly deadLetters: number;
  readonly sinks: ReadonlyMap<string, SinkTally>;
  readonly recentDead: NewestFirst<DeadLetterView>;
  readonly computesProbed: boolean;
  readonly computesFailing: number;
  readonly computesAdvised: number;
  /** The projects by rank (problems first), each in the daemon's order. */
  readonly ranked: readonly (readonly { id: string; project: ProjectFacts }[])[];
}

/** One pass over the watched projects: their health, totals, sinks, newest dead letters, ranks. */
function tallyProjects(
  ids: readonly string[],
  options: StatusViewOptions,
  limits: StatusLimits,
  now: number,
  clean: (text: string) => string,
): ProjectTally {
  const { source, tracker } = options;
  const health: Record<ProjectHealth, number> = {
    blocked: 0,
    poll_failing: 0,
    catching_up: 0,
    waiting: 0,
    ok: 0,
  };
  let open = 0;
  let stuck = 0;
  let recentlyFailing = 0;
  let pending = 0;
  let deadLetters = 0;
  let computesProbed = false;
  let computesFailing = 0;
  let computesAdvised = 0;
  const sinks = new Map<string, SinkTally>();
  for (const s of options.sinks) {
    sinks.set(s.name, { kind: s.kind, pending: 0, oldestMs: Infinity, dead: 0 });
  }
  const sinkEntry = (name: string) => {
    let s = sinks.get(name);
    if (s === undefined) {
      s = { kind: undefined, pending: 0, oldestMs: Infinity, dead: 0 };
      sinks.set(name, s);
    }
    return s;
  };
  const recentDead = new NewestFirst<DeadLetterView>(limits.deadLettersShown);

  // Rows by rank (problems first), each in the daemon's order; only `projectRows` are built.
  const RANKS = 6;
  const ranked: { id: string; project: ProjectFacts }[][] = Array.from({ length: RANKS }, () => []);
  for (const id of ids) {
    const project = source.get(id);
    const state = project?.state;
    const tracked = tracker.get(id);
    const summary = summarise(state, limits);
    const facts = { project, state, tracked, summary };
    const h = healthOf(facts);
    health[h] += 1;
    open += summary.openCount;
    stuck += summary.stuckCount;
    pending += summary.pending;
    deadLetters += summary.deadLetters;
    for (const compute of project?.computes?.values() ?? []) {
      computesProbed = true;
      if (compute.up === false) computesFailing += 1;
      if (compute.advised.length > 0) computesAdvised += 1;
    }
    const newestFailure = tracked?.failures[0];
    const failedRecently =
      newestFailure !== undefined && now - newestFailure.detectedAtMs < limits.recentFailureMs;
    if (failedRecently) recentlyFailing += 1;
    for (const [name, p] of summary.pendingBySink) {
      const s = sinkEntry(name);
      s.pending += p.count;
      s.oldestMs = Math.min(s.oldestMs, p.oldestMs);
    }
    for (const [name, count] of summary.deadBySink) sinkEntry(name).dead += count;
    for (const d of summary.recentDead) {
      if (!recentDead.wants(d.atMs)) break;
      recentDead.add(d.atMs, {
        projectId: id,
        projectName: nameOrUndefined(project?.info?.name, clean),
        sink: d.sink,
        reason: clean(d.reason),
        atMs: d.atMs,
        alertKind: d.alert.kind,
        operationId: d.alert.operationId,
        action: d.alert.action,
        status: d.alert.status,
      });
    }
    ranked[rankOf(h, summary, failedRecently)]?.push({ id, project: facts });
  }

  return {
    health,
    open,
    stuck,
    recentlyFailing,
    pending,
    deadLetters,
    sinks,
    recentDead,
    computesProbed,
    computesFailing,
    computesAdvised,
    ranked,
  };
}

/**
 * Where a project's row stands: blocked, failing, stuck or failed lately, catching up, waiting, ok.
 */
function rankOf(h: ProjectHealth, summary: StateSummary, failedRecently: boolean): number {
  if (h === "blocked") return 0;
  if (h === "poll_failing") return 1;
  if (summary.stuckCount > 0 || failedRecently) return 2;
  if (h === "catching_up") return 3;
  if (h === "waiting") return 4;
  return 5;
}

function accountStatus(
  a: AccountSource,
  projects: number,
  clean: (text: string) => string,
): AccountStatus {
  return {
    name: a.name,
    url: displayUrl(a.url),
    projects,
    stretch: a.scheduler.budget.stretch,
    intervals: {
      fast: a.scheduler.tierIntervalSeconds("fast"),
      active: a.scheduler.tierIntervalSeconds("active"),
      idle: a.scheduler.tierIntervalSeconds("idle"),
    },
    tokens: a.client.limiterStats().tokensRemaining,
    keyRefusal: keyRefusalOf(a, clean),
    wrongBaseUrlSinceMs: a.wrongBaseUrl?.()?.sinceMs,
  };
}

function silenceStatus(silence: SilenceConfig, nowMs: number): SilenceStatus {
  const state = windowState(silence.window, nowMs);
  const conditions = Object.entries(silence.match)
    .filter((entry): entry is [string, readonly string[]] => entry[1] !== undefined)
    .map(([key, values]) => `${key}: ${values.join(", ")}`)
    .join("; ");
  return {
    name: silence.name,
    comment: silence.comment,
    window: silence.window,
    sinks: silence.sinks,
    conditions,
    active: state.active,
    untilMs: state.active ? state.untilMs : undefined,
    nextMs: state.active ? undefined : state.nextMs,
  };
}

interface ProjectFacts {
  readonly project: ProjectView | undefined;
  readonly state: ProjectState | undefined;
  readonly tracked: TrackedProject | undefined;
  readonly summary: StateSummary;
}

function healthOf({ project, state }: ProjectFacts): ProjectHealth {
  if (project?.blocked !== undefined) return "blocked";
  if (project?.failing !== undefined) return "poll_failing";
  if (state?.segment != null) return "catching_up";
  if (project?.lastSuccessMs === undefined || project.lastSuccessBeforeStart) return "waiting";
  return "ok";
}

function projectRow(
  projectId: string,
  facts: ProjectFacts,
  account: string | undefined,
  limits: StatusLimits,
  clean: (text: string) => string,
): StatusProject {
  const { project, tracked, summary } = facts;
  const blocked = project?.blocked;
  const failing = project?.failing;
  const info = project?.info;
  return {
    projectId,
    name: nameOrUndefined(info?.name, clean),
    account: account ?? info?.account,
    orgId: info?.orgId,
    orgName: nameOrUndefined(info?.orgName, clean),
    health: healthOf(facts),
    blocked:
      blocked === undefined ? undefined : { file: clean(blocked.file), problem: blocked.problem },
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
    openCount: summary.openCount,
    stuckCount: summary.stuckCount,
    // Ages on the API's clock: its timestamps moved onto ours.
    open:
      project === undefined || project.clockOffsetMs === 0
        ? summary.open
        : summary.open.map((o) => ({ ...o, createdAtMs: o.createdAtMs - project.clockOffsetMs })),
    failureCount: tracked?.failures.length ?? 0,
    failures: (tracked?.failures ?? []).slice(0, limits.failuresShown).map((f) => ({
      ...f,
      error: f.error === undefined ? undefined : clean(f.error),
    })),
    pending: summary.pending,
    deadLetters: summary.deadLetters,
    droppedAlerts: project?.droppedAlerts ?? 0,
    computes: computeRows(project, limits, clean),
    computeCount: project?.computes?.size ?? 0,
  };
}

/** The computes of a project's row: failing probes first, then advice, then the rest. */
function computeRows(
  project: ProjectView | undefined,
  limits: StatusLimits,
  clean: (text: string) => string,
): ComputeStatus[] {
  const computes = [...(project?.computes?.values() ?? [])];
  if (computes.length === 0) return [];
  const rank = (c: (typeof computes)[number]) =>
    c.up === false ? 0 : c.advised.length > 0 ? 1 : c.reading !== undefined ? 2 : 3;
  const listed = new Map(project?.endpoints?.map((e) => [e.id, e]));
  return computes
    .map((c, i) => ({ c, i }))
    .sort((a, b) => rank(a.c) - rank(b.c) || a.i - b.i)
    .slice(0, limits.computesShown)
    .map(({ c }) => {
      const endpoint = listed.get(c.endpointId);
      const cu = endpoint?.autoscaling_limit_min_cu;
      return {
        endpointId: c.endpointId,
        endpointName: nameOrUndefined(endpoint?.name, clean),
        state: c.state,
        reading:
          c.reading === undefined
            ? undefined
            : {
                atMs: c.reading.atMs,
                startedAtMs: c.reading.startedAtMs,
                hitRatio: c.reading.hitRatio,
                connections: c.reading.connections,
                maxConnections: cu === undefined ? undefined : maxConnectionsFor(cu),
              },
        failure:
          c.failure === undefined ? undefined : { ...c.failure, message: clean(c.failure.message) },
        advised: c.advised,
      };
    });
}

/** Keeps the `limit` items with the largest keys, newest first. */
class NewestFirst<T> {
  readonly #items: { key: number; item: T }[] = [];

  constructor(private readonly limit: number) {}

  /** Whether an item with this key would be kept. */
  wants(key: number): boolean {
    if (this.limit <= 0) return false;
    const last = this.#items[this.limit - 1];
    return last === undefined || key > last.key;
  }

  add(key: number, item: T): void {
    if (!this.wants(key)) return;
    let i = this.#items.length;
    while (i > 0 && (this.#items[i - 1]?.key ?? Infinity) < key) i -= 1;
    this.#items.splice(i, 0, { key, item });
    if (this.#items.length > this.limit) this.#items.pop();
  }

  items(): T[] {
    return this.#items.map((e) => e.item);
  }
}

/** The message of an error, whatever was thrown. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message === "" ? error.name : error.message;
  return String(error);
}

/** Control characters (other than tab and newline) would garble the page: replaced. */
function stripControls(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "\ufffd");
}

function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  return text.slice(0, Math.max(0, max - 1)) + "…";
}

/** An account's key refusal, with the API's message cleaned as every error text is. */
function keyRefusalOf(
  account: AccountSource,
  clean: (text: string) => string,
): AccountStatus["keyRefusal"] {
  const refusal = account.keyRefusal();
  return refusal === undefined ? undefined : { ...refusal, message: clean(refusal.message) };
}
