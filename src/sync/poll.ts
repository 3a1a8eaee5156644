/**
 * One poll of one project: walk the operations log from the newest record down to the committed
 * watermark, follow the open operations that the walk did not reach, and return the next state
 * to commit with the transitions found. Nothing is written here: the caller commits the result
 * in one step, or discards it whole when any request fails (invariant 2, docs/design.md).
 *
 * A walk reads at most `maxPagesPerPoll` pages. When the gap to the watermark is longer (a
 * catch-up after downtime), what was walked is committed as a segment with a resume cursor and
 * the next polls continue downward from there; the watermark moves only once the gap is closed
 * (invariant 4, docs/design.md). Records newer than the segment wait until then.
 */
import {
  PERIODIC_OPERATION_ACTIONS,
  type Operation,
  type OperationsPage,
} from "../contract/index.js";
import {
  MAX_ALSO_RESOLVES,
  STATE_FORMAT,
  STATE_VERSION,
  type Alert,
  type IncidentMark,
  type OutboxEntry,
  type Backfill,
  type Position,
  type ProjectState,
  type Segment,
} from "../store/index.js";
import { AnomalyTally, type AnomalyCount } from "./anomalies.js";
import { cursorMicros } from "./cursor.js";
import { BOTTOM, TopCollector, secondOf } from "./position.js";
import { LabelBudget, boundRecord } from "./record-bounds.js";
import { addTransitions, emptyTotals } from "./totals.js";
import {
  age,
  baseline,
  observe,
  watchExpired,
  type TrackedOperation,
  type TrackerOptions,
} from "./tracker.js";
import type { Transition } from "./transitions.js";
import { walkLog, type WalkParams, type WalkResult } from "./walk.js";

/** Misdated records remembered at most (the oldest-dated are forgotten first). */
const MAX_MISDATED_RECORDS = 10_000;

/** The two reads a poll needs; the API client provides them. */
export interface OperationsSource {
  listOperations(
    projectId: string,
    query: { limit: number; cursor?: string },
    options?: { signal?: AbortSignal },
  ): Promise<OperationsPage>;
  getOperation(
    projectId: string,
    operationId: string,
    options?: { signal?: AbortSignal },
  ): Promise<Operation>;
  /** The API's own time now (epoch ms), from its answers; undefined when it never said. */
  serverNow?(): number | undefined;
}

export interface PollOptions extends TrackerOptions {
  /** Page size of the first request of a walk from the top; small, since most polls stop there. */
  readonly firstPageLimit: number;
  /** Page size of every further request (the API allows up to 1000). */
  readonly pageLimit: number;
  /** Pages one poll may read before committing what it has as a catch-up segment. */
  readonly maxPagesPerPoll: number;
  /** First start: how far back to look for open operations to follow (nothing is counted). */
  readonly firstStartLookbackSeconds: number;
  /** First start: count operations created within this many seconds (0 = off). */
  readonly backfillSeconds: number;
  /** How far past now a record may be dated before it is taken as misdated (default 1 h). */
  readonly futureToleranceSeconds?: number;
  /**
   * Undocumented `action` and `status` values one project may keep as labels, each (default
   * 20); further ones become `other`.
   */
  readonly maxUnknownLabelValues?: number;
  /**
   * Turns a poll's transitions into alerts for the outbox (committed with the checkpoint).
   * History counted by a backfill is not handed over: it is not happening now.
   */
  readonly alertsFor?: (transitions: readonly Transition[], context: AlertContext) => RoutedAlerts;
  /** The project's region as read now (undefined while unknown: the committed one stands). */
  readonly regionOf?: (projectId: string) => string | undefined;
}

/** What the alert hook made of a poll's transitions. */
export interface RoutedAlerts {
  /** New alerts for the outbox, each with the sinks it goes to. */
  readonly entries: readonly OutboxEntry[];
  /** Each (alert, sink) an open silence kept from the sink (`silences:` in the config). */
  readonly silenced: readonly SilencedAlert[];
  /**
   * The failures that may group into a platform incident, each with the incident it joined:
   * committed with the alerts (`store/incident-record.ts`).
   */
  readonly incidentMarks?: readonly IncidentMark[];
}

/** An alert a silence kept from one sink. */
export interface SilencedAlert {
  readonly alert: Alert;
  readonly sink: string;
  /** The silence's name. */
  readonly silence: string;
}

export interface AlertContext {
  /** When the poll found the transitions (epoch ms). */
  readonly nowMs: number;
  /** The alerts raised earlier for an operation still followed, with the sinks each went to. */
  readonly alerted: (operationId: string) => readonly AlertedTo[];
  /** Whether `sink` gave up on the alert `alertId` (it is among the dead letters). */
  readonly deadLettered: (alertId: string, sink: string) => boolean;
  /** The project's region: as read now, else as committed; undefined while never read. */
  readonly regionId?: string | undefined;
}

/** An alert raised for an operation, and the sinks it was routed to. */
export interface AlertedTo {
  readonly id: string;
  readonly sinks: readonly string[];
  /** The sinks a silence kept it from, with the silence's name. */
  readonly silenced?: readonly { readonly sink: string; readonly silence: string }[] | undefined;
}

/**
 * Most alerts remembered per followed operation (the newest): as many as its recovery resolves
 * (`resolves` and `alsoResolves`).
 */
const ALERTED_KEPT = MAX_ALSO_RESOLVES + 1;

export interface PollResult {
  /**
   * The state to commit. Its outbox is the one the poll started from: the committer adds
   * `alerts` to the latest outbox (which deliveries may have changed meanwhile).
   */
  readonly state: ProjectState;
  /** New alerts for the outbox, raised by this poll's transitions. */
  readonly alerts: readonly OutboxEntry[];
  /** Alerts this poll raised that silences kept from sinks (each alert once per sink). */
  readonly silenced: readonly SilencedAlert[];
  /** Its failures that may group into a platform incident (see `RoutedAlerts`). */
  readonly incidentMarks?: readonly IncidentMark[];
  readonly transitions: readonly Transition[];
  /** Requests made (pages and single reads). */
  readonly requests: number;
  /** A catch-up segment remains open after this poll. */
  readonly catchingUp: boolean;
  /** This poll walked from the newest record down to the checkpoint: nothing is left behind. */
  readonly caughtUp: boolean;
  /** This was the project's first poll (no committed state before it). */
  readonly firstStart: boolean;
  /** What the poll found odd in the answers and worked around, by kind. */
  readonly anomalies: readonly AnomalyCount[];
  /** The API's time (epoch ms) the poll measured the operations' ages against. */
  readonly serverNowMs: number;
  /**
   * When each operation this poll read was created (epoch ms, the API's clock), new or not, one
   * entry an operation, leaving out the control plane's periodic ones and any dated after the
   * API's now: the project's recent activity as its log shows it.
   */
  readonly activityMs: readonly number[];
}

/** A tracked operation as it travels through one poll, with the page cursor it was read at. */
type Followed = TrackedOperation & { readonly cursor?: string | undefined };

/** Handler for each record read; `fresh` when the walk found it new (see `walkLog`). */
type RecordVisitor = (record: Operation, pageCursor: string | undefined, fresh: boolean) => void;

/**
 * `nowMs` is our wall clock: when the state was committed and the alerts raised, and what
 * silences are read against. What is compared with the API's timestamps (how long an operation
 * has been open, how long a failed one is watched, the future tolerance, a first start's
 * lookback and backfill) is measured on the API's own clock, read from the first answer of the
 * poll (`serverNow`), so that skew between the two clocks, or a step of ours, changes nothing.
 * An API that never sends a `Date` is measured against our wall clock.
 */
export async function poll(
  source: OperationsSource,
  projectId: string,
  previous: ProjectState | undefined,
  nowMs: number,
  options: PollOptions,
  signal?: AbortSignal,
): Promise<PollResult> {
  const firstStart = previous === undefined;
  const tracked = new Map<string, Followed>(
    (previous?.tracked ?? []).map((t) => [t.id, fromStored(t)]),
  );
  const seen = new Set<string>();
  const transitions: Transition[] = [];
  const anomalies = new AnomalyTally();
  const segment = previous?.segment ?? null;
  const reads = await openWalk(source, projectId, segment, options, signal);
  const apiNowMs = source.serverNow?.() ?? nowMs;

  const bounds = walkBounds(previous, apiNowMs, options);
  const { baselineOnly, floor } = bounds;
  // Transitions that may raise alerts: not those of history counted by a backfill.
  const alertable: Transition[] = [];

  const visitRecord = recordVisitor({
    projectId,
    found: { tracked, seen, transitions, alertable, anomalies },
    labels: new LabelBudget(options.maxUnknownLabelValues ?? 20, labelledIn(previous)),
    bounds,
    apiNowMs,
    options,
  });
  const activity = new Map<string, number>();
  const visit: RecordVisitor = (record, pageCursor, fresh) => {
    if (!PERIODIC_OPERATION_ACTIONS.has(record.action)) {
      const createdMs = secondOf(record) * 1000;
      if (createdMs <= apiNowMs) activity.set(record.id, createdMs);
    }
    visitRecord(record, pageCursor, fresh);
  };

  const misdated = new Map((previous?.misdated ?? []).map((m) => [m.id, m.second]));
  const { walked, top, newlyMisdated } = await walkDown(
    {
      list: reads.list,
      floor,
      known: new Set(misdated.keys()),
      startCursor: segment?.resumeCursor,
      ...(segment?.recent === undefined ? {} : { readBefore: segment.recent }),
      firstPageLimit: options.firstPageLimit,
      pageLimit: options.pageLimit,
      maxPages: options.maxPagesPerPoll,
      visit,
      anomaly: (kind, record) => {
        anomalies.add(kind, record.id);
      },
    },
    {
      capSecond: bounds.nowSecond + (options.futureToleranceSeconds ?? 3600),
      baselineOnly,
      anomalies,
    },
  );
  const { watermark, nextSegment } = nextCheckpoint(previous, walked, top, bounds);

  // Operations followed but not read by the walk: re-read their page, or read them by id.
  // Where reading on from the walk continues: only below a complete walk from the top.
  const frontier = segment === null && walked.complete ? walked.frontier : undefined;
  const reread = await follow(source, projectId, tracked, seen, visit, options, frontier, signal);

  const aged = ageUnseen(tracked, seen, apiNowMs, options);
  transitions.push(...aged);
  alertable.push(...aged);

  const totals = addTransitions(previous?.totals ?? emptyTotals(), transitions);
  const regionId = options.regionOf?.(projectId) ?? previous?.regionId;
  const {
    entries: alerts,
    silenced,
    alerted,
    incidentMarks,
  } = raiseAlerts(previous, alertable, nowMs, options, regionId);

  const state = nextState(previous, {
    projectId,
    nowMs,
    watermark,
    nextSegment,
    tracked: [...tracked.values()].map((t) => toStored(t, alerted.get(t.id) ?? [])),
    misdated: misdatedEntries(
      // A walk from the top that met a misdated record no more has left it behind for good.
      segment === null && walked.complete
        ? [...misdated].filter(([id]) => walked.knownAhead.has(id))
        : [...misdated],
      newlyMisdated,
    ),
    totals,
    regionId,
  });
  return {
    state,
    alerts,
    silenced,
    incidentMarks: incidentMarks ?? [],
    transitions,
    requests: reads.requests() + reread,
    catchingUp: nextSegment !== null,
    caughtUp: segment === null && walked.complete,
    firstStart,
    anomalies: anomalies.list(),
    serverNowMs: apiNowMs,
    activityMs: [...activity.values()],
  };
}

/**
 * The walk's page reads, counted. Its first page is read at once, before anything is decided:
 * its answer tells the API's time (`serverNow`); the walk's first read is then given it.
 */
async function openWalk(
  source: OperationsSource,
  projectId: string,
  segment: Segment | null,
  options: PollOptions,
  signal: AbortSignal | undefined,
): Promise<{ list: WalkParams["list"]; requests: () => number }> {
  let requests = 0;
  const list = async (limit: number, cursor: string | undefined): Promise<OperationsPage> => {
    requests += 1;
    const query = cursor === undefined ? { limit } : { limit, cursor };
    return source.listOperations(projectId, query, signal === undefined ? {} : { signal });
  };
  const firstLimit =
    segment?.resumeCursor === undefined ? options.firstPageLimit : options.pageLimit;
  let firstPage: OperationsPage | undefined = await list(firstLimit, segment?.resumeCursor);
  return {
    list: (limit, cursor) => {
      const page = firstPage;
      firstPage = undefined;
      return page === undefined ? list(limit, cursor) : Promise.resolve(page);
    },
    requests: () => requests,
  };
}

/** What a poll has found so far: the records' transitions, what it follows, what was odd. */
interface Found {
  readonly tracked: Map<string, Followed>;
  /** The followed operations read by this poll. */
  readonly seen: Set<string>;
  readonly transitions: Transition[];
  /** Transitions that may raise alerts: not those of history counted by a backfill. */
  readonly alertable: Transition[];
  readonly anomalies: AnomalyTally;
}

/**
 * What the poll does with each record read: a fresh one, or one it follows, is bounded and
 * observed (its transitions found, what is followed next), or counted as history or baseline.
 */
function recordVisitor(context: {
  readonly projectId: string;
  readonly found: Found;
  readonly labels: LabelBudget;
  readonly bounds: { readonly baselineOnly: boolean; readonly backfill: Backfill | undefined };
  readonly apiNowMs: number;
  readonly options: PollOptions;
}): RecordVisitor {
  const { projectId, labels, apiNowMs, options } = context;
  const { tracked, seen, transitions, alertable, anomalies } = context.found;
  const { baselineOnly, backfill } = context.bounds;
  return (raw, pageCursor, fresh) => {
    const before = tracked.get(raw.id);
    if (!fresh && before === undefined) return;
    // Attributed to this project, with bounded labels and error text, whatever the API sent.
    const { record, changes } = boundRecord(raw, projectId, labels);
    // Reported when first seen, not on every later read of an operation followed.
    if (before === undefined) for (const kind of changes) anomalies.add(kind, record.id);
    seen.add(record.id);
    let next: TrackedOperation | undefined;
    const history = fresh && backfill !== undefined;
    if (fresh && (baselineOnly || (history && secondOf(record) < backfill.countFromSecond))) {
      next = baseline(record, options);
    } else {
      const observation = observe(before, record, apiNowMs, options);
      transitions.push(...observation.transitions);
      if (!history) alertable.push(...observation.transitions);
      next = observation.next;
    }
    if (next === undefined) tracked.delete(record.id);
    else tracked.set(record.id, { ...next, cursor: pageCursor });
  };
}

/**
 * Walks the log down to the floor (`walkLog`). Misdated records never move the checkpoint: one
 * dated beyond now plus the tolerance (a server clock far ahead), or one dated below the floor
 * that stands among new records (out of order). Each is counted once and remembered, so that it
 * is passed over while walks still meet it before their end. The newest of the others become
 * the next checkpoint (`top`).
 */
async function walkDown(
  params: WalkParams,
  dates: { capSecond: number; baselineOnly: boolean; anomalies: AnomalyTally },
): Promise<{ walked: WalkResult; top: TopCollector; newlyMisdated: Map<string, number> }> {
  const { capSecond, baselineOnly, anomalies } = dates;
  const newlyMisdated = new Map<string, number>();
  const top = new TopCollector();
  const walked = await walkLog({
    ...params,
    visit: (record, pageCursor, fresh) => {
      if (fresh || baselineOnly) {
        const second = secondOf(record);
        if (fresh && (second > capSecond || second < params.floor.second)) {
          newlyMisdated.set(record.id, second);
          if (second > capSecond) anomalies.add("future_record", record.id);
        } else if (second <= capSecond) {
          // The newest records become the next checkpoint; on a first start, whatever they are.
          top.add(record);
        }
      }
      params.visit(record, pageCursor, fresh);
    },
  });
  return { walked, top, newlyMisdated };
}

/** The state to commit after a poll; the outbox and dead letters are those it started from. */
function nextState(
  previous: ProjectState | undefined,
  next: {
    projectId: string;
    nowMs: number;
    watermark: Position;
    nextSegment: Segment | null;
    tracked: ProjectState["tracked"];
    misdated: Pick<ProjectState, "misdated">;
    totals: ProjectState["totals"];
    regionId: string | undefined;
  },
): ProjectState {
  return {
    format: STATE_FORMAT,
    version: STATE_VERSION,
    projectId: next.projectId,
    sequence: (previous?.sequence ?? 0) + 1,
    committedAtMs: next.nowMs,
    watermark: next.watermark,
    segment: next.nextSegment,
    tracked: next.tracked,
    ...next.misdated,
    totals: next.totals,
    ...(next.regionId === undefined ? {} : { regionId: next.regionId }),
    outbox: previous?.outbox ?? [],
    deadLetters: previous?.deadLetters ?? [],
  };
}

/**
 * What the walk counts, and against which floor: on a first start, from the lookback (or the
 * backfill, when longer); otherwise from the committed watermark.
 */
function walkBounds(
  previous: ProjectState | undefined,
  apiNowMs: number,
  options: PollOptions,
): { baselineOnly: boolean; backfill: Backfill | undefined; floor: Position; nowSecond: number } {
  const nowSecond = Math.floor(apiNowMs / 1000);
  if (previous !== undefined) {
    return {
      baselineOnly: false,
      backfill: previous.segment?.backfill,
      floor: previous.watermark,
      nowSecond,
    };
  }
  const baselineOnly = options.backfillSeconds <= 0;
  // A backfill (a first start's, or the catch-up it opened): records created from
  // `countFromSecond` on are history to count (no alerts); older ones are only followed when
  // open, as on a first start without backfill.
  const backfill: Backfill | undefined = baselineOnly
    ? undefined
    : { countFromSecond: nowSecond - options.backfillSeconds };
  const lookback = nowSecond - options.firstStartLookbackSeconds;
  const floor = { second: Math.min(lookback, backfill?.countFromSecond ?? lookback) - 1, ids: [] };
  return { baselineOnly, backfill, floor, nowSecond };
}

/** The checkpoint after a walk: what is now fully walked, and the catch-up left open, if any. */
function nextCheckpoint(
  previous: ProjectState | undefined,
  walked: WalkResult,
  top: TopCollector,
  bounds: { floor: Position; baselineOnly: boolean; backfill: Backfill | undefined },
): { watermark: Position; nextSegment: Segment | null } {
  const { floor, baselineOnly, backfill } = bounds;
  const firstStart = previous === undefined;
  const segment = previous?.segment ?? null;
  let watermark: Position = previous?.watermark ?? BOTTOM;
  let nextSegment: Segment | null = segment;
  if (segment !== null) {
    // The catch-up's top covers what it walks: in an ordered log its first walk saw the newest
    // records, but one whose first pages held only misdated records has to grow.
    const segmentTop = top.position(segment.top) ?? segment.top;
    if (walked.complete) {
      watermark = segmentTop;
      nextSegment = null;
    } else {
      nextSegment = {
        ...segment,
        top: segmentTop,
        resumeCursor: walked.resumeCursor,
        recent: [...walked.tail],
      };
    }
  } else {
    // A first start that found no record to stand on (an empty log, or only future-dated
    // records) starts from its floor: what lies below it is history, not news.
    const newest = firstStart
      ? (top.position(BOTTOM) ?? floor)
      : (top.position(watermark) ?? watermark);
    if (walked.complete || baselineOnly) {
      watermark = newest;
    } else {
      nextSegment = {
        top: newest,
        resumeCursor: walked.resumeCursor,
        recent: [...walked.tail],
        ...(backfill === undefined ? {} : { backfill }),
      };
      // A first start's catch-up (a backfill longer than one poll) stops where it began to.
      if (firstStart) watermark = floor;
    }
  }

  return { watermark, nextSegment };
}

/**
 * Ages the followed operations the poll did not read (stuck, for one); lets go of a failed one
 * watched long enough for a retry. Returns the transitions found.
 */
function ageUnseen(
  tracked: Map<string, Followed>,
  seen: ReadonlySet<string>,
  apiNowMs: number,
  options: PollOptions,
): Transition[] {
  const transitions: Transition[] = [];
  for (const [id, t] of tracked) {
    // A failed operation watched long enough for a retry is let go, after this last read.
    if (watchExpired(t, apiNowMs)) {
      tracked.delete(id);
      continue;
    }
    if (seen.has(id)) continue;
    const aged = age(t, apiNowMs, options);
    transitions.push(...aged.transitions);
    if (aged.next !== undefined) tracked.set(id, { ...aged.next, cursor: t.cursor });
  }
  return transitions;
}

/**
 * The alerts the poll's alertable transitions raise (`alertsFor`), and what each followed
 * operation was alerted of since: where each alert went, and where silences kept it from.
 */
function raiseAlerts(
  previous: ProjectState | undefined,
  alertable: readonly Transition[],
  nowMs: number,
  options: PollOptions,
  regionId: string | undefined,
): RoutedAlerts & { alerted: Map<string, AlertedTo[]> } {
  const alerted = new Map<string, AlertedTo[]>(
    (previous?.tracked ?? []).map((t) => [t.id, t.alerted ?? []]),
  );
  const deadLetters = new Set(
    (previous?.deadLetters ?? []).map((d) => JSON.stringify([d.alert.id, d.sink])),
  );
  const {
    entries: alerts,
    silenced,
    incidentMarks,
  } = options.alertsFor?.(alertable, {
    nowMs,
    alerted: (id) => alerted.get(id) ?? [],
    deadLettered: (alertId, sink) => deadLetters.has(JSON.stringify([alertId, sink])),
    regionId,
  }) ?? { entries: [], silenced: [] };
  // Where each alert went, and where silences kept it from: its recovery follows it.
  const silencedFrom = new Map<string, { sink: string; silence: string }[]>();
  for (const { alert, sink, silence } of silenced) {
    silencedFrom.set(alert.id, [...(silencedFrom.get(alert.id) ?? []), { sink, silence }]);
  }
  const raised = new Map([...alerts, ...silenced].map(({ alert }) => [alert.id, alert]));
  const pendingOf = new Map(alerts.map((e) => [e.alert.id, e.pending]));
  for (const alert of raised.values()) {
    const before = alerted.get(alert.operationId) ?? [];
    const quiet = silencedFrom.get(alert.id);
    const to: AlertedTo = {
      id: alert.id,
      sinks: pendingOf.get(alert.id) ?? [],
      ...(quiet === undefined ? {} : { silenced: quiet }),
    };
    alerted.set(alert.operationId, [...before, to].slice(-ALERTED_KEPT));
  }

  return {
    entries: alerts,
    silenced,
    alerted,
    ...(incidentMarks === undefined ? {} : { incidentMarks }),
  };
}

/** The misdated records to remember, the newest-dated first, at most `MAX_MISDATED_RECORDS`. */
function misdatedEntries(
  kept: Iterable<[string, number]>,
  added: ReadonlyMap<string, number>,
): Pick<ProjectState, "misdated"> {
  const entries = [...kept, ...added]
    .sort((a, b) => b[1] - a[1])
    .slice(0, MAX_MISDATED_RECORDS)
    .map(([id, second]) => ({ id, second }));
  return entries.length === 0 ? {} : { misdated: entries };
}

/** The actions and statuses a project's committed state already exports as labels. */
function labelledIn(
  state: ProjectState | undefined,
): { readonly action: string; readonly status?: string }[] {
  if (state === undefined) return [];
  return [
    ...state.totals.arrivals,
    ...state.tracked,
    ...Object.keys(state.totals.retries).map((action) => ({ action })),
  ];
}

/**
 * Reads the followed operations the walk did not reach, newest first, each with one page read
 * that returns it and its neighbours: from the cursor of the page it was last read on, or from
 * `frontier` (just below what this poll has read) when that lies deeper, or when it was last
 * read on a first page (no cursor of its own). Every read thus starts at or below the previous
 * one, so the reads cost no more than the pages down to the deepest operation, and each one
 * returns the operation it was made for, so they cost no more than one per operation. An
 * operation the pages no longer return is read by id. Returns the number of requests made.
 */
async function follow(
  source: OperationsSource,
  projectId: string,
  tracked: Map<string, Followed>,
  seen: Set<string>,
  visit: RecordVisitor,
  options: PollOptions,
  frontier: string | undefined,
  signal: AbortSignal | undefined,
): Promise<number> {
  const pending = [...tracked.values()]
    .filter((t) => !seen.has(t.id))
    .sort((a, b) => b.createdAtMs - a.createdAtMs);
  const requestOptions = signal === undefined ? {} : { signal };
  let requests = 0;
  let below = frontier;
  for (const t of pending) {
    if (seen.has(t.id)) continue;
    const from = deeperCursor(t.cursor, below);
    if (from !== undefined) {
      requests += 1;
      const page = await source.listOperations(
        projectId,
        { limit: options.pageLimit, cursor: from },
        requestOptions,
      );
      for (const record of page.operations) visit(record, from, false);
      below = page.operations.length >= options.pageLimit ? page.pagination?.cursor : undefined;
      if (seen.has(t.id)) continue;
    }
    // Not on the page read for it (the service dropped it from the log): read it by id.
    requests += 1;
    try {
      visit(await source.getOperation(projectId, t.id, requestOptions), t.cursor, false);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      // The service no longer knows the operation: stop following it.
      tracked.delete(t.id);
    }
  }
  return requests;
}

/**
 * Of an operation's own cursor and the frontier, the one further down the log. Cursors are
 * microsecond timestamps (older is further down); one that is not keeps the operation's own.
 */
function deeperCursor(own: string | undefined, frontier: string | undefined): string | undefined {
  if (own === undefined || frontier === undefined) return own ?? frontier;
  const a = cursorMicros(own);
  const b = cursorMicros(frontier);
  if (a === undefined || b === undefined) return own;
  return a <= b ? own : frontier;
}

function isNotFound(error: unknown): boolean {
  return (error as { status?: unknown } | null)?.status === 404;
}

function fromStored({ alerted: _alerted, ...t }: ProjectState["tracked"][number]): Followed {
  return {
    ...t,
    branchId: t.branchId,
    endpointId: t.endpointId,
    error: t.error,
    watchUntilMs: t.watchUntilMs,
    cursor: t.cursor,
  };
}

function toStored(t: Followed, alerted: readonly AlertedTo[]): ProjectState["tracked"][number] {
  const stored: ProjectState["tracked"][number] = {
    id: t.id,
    projectId: t.projectId,
    action: t.action,
    status: t.status,
    failuresCount: t.failuresCount,
    createdAtMs: t.createdAtMs,
    updatedAtMs: t.updatedAtMs,
    durationMs: t.durationMs,
    stuck: t.stuck,
    failed: t.failed,
  };
  if (t.branchId !== undefined) stored.branchId = t.branchId;
  if (t.endpointId !== undefined) stored.endpointId = t.endpointId;
  if (t.error !== undefined) stored.error = t.error;
  if (t.watchUntilMs !== undefined) stored.watchUntilMs = t.watchUntilMs;
  if (t.stuckStatus !== undefined) stored.stuckStatus = t.stuckStatus;
  if (t.cursor !== undefined) stored.cursor = t.cursor;
  if (alerted.length > 0) {
    stored.alerted = alerted.map((a) => ({
      id: a.id,
      sinks: [...a.sinks],
      ...(a.silenced === undefined ? {} : { silenced: a.silenced.map((q) => ({ ...q })) }),
    }));
  }
  return stored;
}
