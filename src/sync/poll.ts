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
import { PERIODIC_OPERATION_ACTIONS, type OperationsPage } from "../contract/index.js";
import type { Backfill, Position, ProjectState, Segment } from "../store/index.js";
import { AnomalyTally } from "./anomalies.js";
import { endedAttempts } from "./attempts.js";
import { nextCheckpoint, nextState, misdatedEntries, walkBounds, walkDown } from "./checkpoint.js";
import { follow } from "./follow.js";
import { fromStored, toStored, type Followed, type RecordVisitor } from "./followed.js";
import { raiseAlerts } from "./poll-alerts.js";
import type { OperationsSource, PollOptions, PollResult } from "./poll-types.js";
import { secondOf } from "./position.js";
import { LabelBudget, boundRecord } from "./record-bounds.js";
import { addTransitions, emptyTotals } from "./totals.js";
import { age, baseline, observe, watchExpired, type TrackedOperation } from "./tracker.js";
import type { Transition } from "./transitions.js";
import type { WalkParams, WalkResult } from "./walk.js";

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
  const reads = await openWalk(source, projectId, previous?.segment ?? null, options, signal);
  const apiNowMs = source.serverNow?.() ?? nowMs;
  const bounds = walkBounds(previous, apiNowMs, options);
  const found = findings(previous);
  const visit = pollVisitor({ projectId, previous, found, bounds, apiNowMs, options });
  const walk = await walkFromTop({ previous, reads, visit, bounds, found, options });
  // Operations followed but not read by the walk: re-read their page, or read them by id.
  // Where reading on from the walk continues: only below a complete walk from the top.
  const frontier = walk.fromTop && walk.walked.complete ? walk.walked.frontier : undefined;
  const reread = await follow({
    source,
    projectId,
    tracked: found.tracked,
    seen: found.seen,
    visit,
    pageLimit: options.pageLimit,
    frontier,
    signal,
  });
  const aged = ageUnseen(found.tracked, found.seen, apiNowMs, options);
  found.transitions.push(...aged);
  found.alertable.push(...aged);
  return settle({
    projectId,
    previous,
    nowMs,
    apiNowMs,
    options,
    found,
    walk,
    requests: reads.requests() + reread,
  });
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
  /** When each operation read was created (the API's clock), the periodic ones aside. */
  readonly activity: Map<string, number>;
}

/** Nothing found yet; the operations the committed state follows. */
function findings(previous: ProjectState | undefined): Found {
  return {
    tracked: new Map((previous?.tracked ?? []).map((t) => [t.id, fromStored(t)])),
    seen: new Set(),
    transitions: [],
    alertable: [],
    anomalies: new AnomalyTally(),
    activity: new Map(),
  };
}

/** What a walk from the top (or on down a catch-up segment) leaves. */
interface Walk {
  /** The walk began at the top of the log, not down a segment. */
  readonly fromTop: boolean;
  readonly walked: WalkResult;
  readonly newlyMisdated: ReadonlyMap<string, number>;
  /** The misdated records remembered before this walk. */
  readonly misdated: ReadonlyMap<string, number>;
  readonly watermark: Position;
  readonly nextSegment: Segment | null;
}

/** Walks the log down to the bounds' floor, and works out the checkpoint it leaves. */
async function walkFromTop(context: {
  readonly previous: ProjectState | undefined;
  readonly reads: { readonly list: WalkParams["list"] };
  readonly visit: RecordVisitor;
  readonly bounds: ReturnType<typeof walkBounds>;
  readonly found: Found;
  readonly options: PollOptions;
}): Promise<Walk> {
  const { previous, bounds, found, options } = context;
  const segment = previous?.segment ?? null;
  const misdated = new Map((previous?.misdated ?? []).map((m) => [m.id, m.second]));
  const { walked, top, newlyMisdated } = await walkDown(
    {
      list: context.reads.list,
      floor: bounds.floor,
      known: new Set(misdated.keys()),
      startCursor: segment?.resumeCursor,
      ...(segment?.recent === undefined ? {} : { readBefore: segment.recent }),
      firstPageLimit: options.firstPageLimit,
      pageLimit: options.pageLimit,
      maxPages: options.maxPagesPerPoll,
      visit: context.visit,
      anomaly: (kind, record) => {
        found.anomalies.add(kind, record.id);
      },
    },
    {
      capSecond: bounds.nowSecond + (options.futureToleranceSeconds ?? 3600),
      baselineOnly: bounds.baselineOnly,
      anomalies: found.anomalies,
    },
  );
  const { watermark, nextSegment } = nextCheckpoint(previous, walked, top, bounds);
  return { fromTop: segment === null, walked, newlyMisdated, misdated, watermark, nextSegment };
}

/** The poll's result: the totals, the alerts its transitions raise, and the state to commit. */
function settle(context: {
  readonly projectId: string;
  readonly previous: ProjectState | undefined;
  readonly nowMs: number;
  readonly apiNowMs: number;
  readonly options: PollOptions;
  readonly found: Found;
  readonly walk: Walk;
  readonly requests: number;
}): PollResult {
  const { projectId, previous, nowMs, options, found, walk } = context;
  const regionId = options.regionOf?.(projectId) ?? previous?.regionId;
  const raised = raiseAlerts(previous, found.alertable, nowMs, options, regionId);
  const caughtUp = walk.fromTop && walk.walked.complete;
  const state = nextState(previous, {
    projectId,
    nowMs,
    watermark: walk.watermark,
    nextSegment: walk.nextSegment,
    tracked: [...found.tracked.values()].map((t) => toStored(t, raised.alerted.get(t.id) ?? [])),
    misdated: misdatedEntries(
      // A walk from the top that met a misdated record no more has left it behind for good.
      caughtUp
        ? [...walk.misdated].filter(([id]) => walk.walked.knownAhead.has(id))
        : [...walk.misdated],
      walk.newlyMisdated,
    ),
    totals: addTransitions(previous?.totals ?? emptyTotals(), found.transitions),
    regionId,
  });
  const spans = options.spansFor?.(endedAttempts(found.transitions), { regionId }) ?? [];
  return {
    state,
    alerts: raised.entries,
    spans,
    silenced: raised.silenced,
    incidentMarks: raised.incidentMarks ?? [],
    transitions: found.transitions,
    requests: context.requests,
    catchingUp: walk.nextSegment !== null,
    caughtUp,
    firstStart: previous === undefined,
    anomalies: found.anomalies.list(),
    serverNowMs: context.apiNowMs,
    activityMs: [...found.activity.values()],
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

/**
 * What the poll does with each record read: a fresh one, or one it follows, is bounded and
 * observed (its transitions found, what is followed next), or counted as history or baseline;
 * every record's creation is noted as the project's activity (the periodic ones aside).
 */
function pollVisitor(context: {
  readonly projectId: string;
  readonly previous: ProjectState | undefined;
  readonly found: Found;
  readonly bounds: { readonly baselineOnly: boolean; readonly backfill: Backfill | undefined };
  readonly apiNowMs: number;
  readonly options: PollOptions;
}): RecordVisitor {
  const { projectId, apiNowMs, options } = context;
  const { tracked, seen, transitions, alertable, anomalies, activity } = context.found;
  const { baselineOnly, backfill } = context.bounds;
  const labels = new LabelBudget(options.maxUnknownLabelValues ?? 20, labelledIn(context.previous));
  return (raw, pageCursor, fresh) => {
    if (!PERIODIC_OPERATION_ACTIONS.has(raw.action)) {
      const createdMs = secondOf(raw) * 1000;
      if (createdMs <= apiNowMs) activity.set(raw.id, createdMs);
    }
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
