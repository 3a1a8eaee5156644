/**
 * Where a poll's walk stands: what it counts and against which floor (`walkBounds`), the walk
 * down to that floor passing over misdated records (`walkDown`), the checkpoint it leaves
 * (`nextCheckpoint`: the watermark, or a catch-up segment), and the state to commit
 * (`nextState`).
 */
import {
  STATE_FORMAT,
  STATE_VERSION,
  type Backfill,
  type Position,
  type ProjectState,
  type Segment,
} from "../store/index.js";
import type { AnomalyTally } from "./anomalies.js";
import { BOTTOM, TopCollector, secondOf } from "./position.js";
import type { PollOptions } from "./poll-types.js";
import { walkLog, type WalkParams, type WalkResult } from "./walk.js";

/** Misdated records remembered at most (the oldest-dated are forgotten first). */
const MAX_MISDATED_RECORDS = 10_000;

/**
 * What the walk counts, and against which floor: on a first start, from the lookback (or the
 * backfill, when longer); otherwise from the committed watermark.
 */
export function walkBounds(
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

/**
 * Walks the log down to the floor (`walkLog`). Misdated records never move the checkpoint: one
 * dated beyond now plus the tolerance (a server clock far ahead), or one dated below the floor
 * that stands among new records (out of order). Each is counted once and remembered, so that it
 * is passed over while walks still meet it before their end. The newest of the others become
 * the next checkpoint (`top`).
 */
export async function walkDown(
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

/** The checkpoint after a walk: what is now fully walked, and the catch-up left open, if any. */
export function nextCheckpoint(
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

/** The state to commit after a poll; the outbox and dead letters are those it started from. */
export function nextState(
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

/** The misdated records to remember, the newest-dated first, at most `MAX_MISDATED_RECORDS`. */
export function misdatedEntries(
  kept: Iterable<[string, number]>,
  added: ReadonlyMap<string, number>,
): Pick<ProjectState, "misdated"> {
  const entries = [...kept, ...added]
    .sort((a, b) => b[1] - a[1])
    .slice(0, MAX_MISDATED_RECORDS)
    .map(([id, second]) => ({ id, second }));
  return entries.length === 0 ? {} : { misdated: entries };
}
