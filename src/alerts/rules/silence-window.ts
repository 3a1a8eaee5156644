/**
 * When a silence's window is open: pure decisions over an instant given by the caller (no
 * clock is read).
 *
 * A one-off window is open on [start, end). A recurring window opens at every instant its cron
 * expression matches in its time zone (read as `zone-clock.ts` says: a skipped minute opens at
 * the jump, a repeated one once) and stays open for its duration: it is open at t exactly when
 * some opening lies in (t − duration, t].
 */
import { cronMatchesDay } from "../../config/cron.js";
import type { RecurringWindow, SilenceWindow } from "../../config/silences.js";
import { instantOf, naiveOf, wallAt, wallOfNaive } from "./zone-clock.js";

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** More than any offset change (Troll: 2 h): how far naive and real time may drift apart. */
const SLACK_MS = 3 * 3_600_000;
/** How far ahead the next opening is looked for (a 29 February may be eight years away). */
const HORIZON_MS = 8 * 366 * DAY_MS;
/** Openings followed when overlapping occurrences extend an open window. */
const MAX_CHAINED = 1000;

export type WindowState =
  | {
      readonly active: true;
      /**
       * When the window closes (the end of a run of overlapping or back-to-back occurrences);
       * undefined when the run goes on past a thousand occurrences (it never closes, in effect).
       */
      readonly untilMs: number | undefined;
    }
  | {
      readonly active: false;
      /** When it next opens; undefined when it never will again. */
      readonly nextMs: number | undefined;
    };

/** Whether the window is open at `tMs`. */
export function isActive(window: SilenceWindow, tMs: number): boolean {
  if (window.kind === "one_off") return window.startMs <= tMs && tMs < window.endMs;
  const opened = latestOpening(window, tMs, tMs - window.durationSeconds * 1000);
  return opened !== undefined && opened > tMs - window.durationSeconds * 1000;
}

/** Whether the window is open at `tMs`, and until when; or when it next opens. */
export function windowState(window: SilenceWindow, tMs: number): WindowState {
  if (window.kind === "one_off") {
    if (tMs >= window.endMs) return { active: false, nextMs: undefined };
    if (tMs < window.startMs) return { active: false, nextMs: window.startMs };
    return { active: true, untilMs: window.endMs };
  }
  const durationMs = window.durationSeconds * 1000;
  const opened = latestOpening(window, tMs, tMs - durationMs);
  if (opened === undefined || opened <= tMs - durationMs) {
    return { active: false, nextMs: nextOpening(window, tMs, tMs + HORIZON_MS) };
  }
  let untilMs = opened + durationMs;
  let from = opened;
  for (let i = 0; i < MAX_CHAINED; i++) {
    const next = nextOpening(window, from, untilMs);
    if (next === undefined) return { active: true, untilMs };
    untilMs = Math.max(untilMs, next + durationMs);
    from = next;
  }
  return { active: true, untilMs: undefined };
}

/**
 * The latest opening at or before `tMs`, looking no further back than `notBeforeMs` (minus a
 * minute); undefined when there is none in that span.
 */
export function latestOpening(
  window: RecurringWindow,
  tMs: number,
  notBeforeMs: number,
): number | undefined {
  const { schedule, timeZone } = window;
  const highest = naiveOf(wallAt(tMs, timeZone)) + SLACK_MS;
  const lowest = naiveOf(wallAt(notBeforeMs, timeZone)) - SLACK_MS - MINUTE_MS;
  for (let day = startOfDay(highest); day >= startOfDay(lowest); day -= DAY_MS) {
    if (!cronMatchesDay(schedule, wallOfNaive(day))) continue;
    for (let h = schedule.hours.length - 1; h >= 0; h--) {
      for (let m = schedule.minutes.length - 1; m >= 0; m--) {
        const naive =
          day + (schedule.hours[h] ?? 0) * 3_600_000 + (schedule.minutes[m] ?? 0) * MINUTE_MS;
        if (naive > highest || naive < lowest) continue;
        // Openings never go back in time as the wall clock goes forward: the first at or before
        // tMs, going down, is the latest.
        const instant = instantOf(wallOfNaive(naive), timeZone);
        if (instant <= tMs) return instant;
      }
    }
  }
  return undefined;
}

/** The first opening after `tMs`, up to `untilMs`; undefined when there is none. */
export function nextOpening(
  window: RecurringWindow,
  tMs: number,
  untilMs: number,
): number | undefined {
  const { schedule, timeZone } = window;
  const lowest = naiveOf(wallAt(tMs, timeZone)) - SLACK_MS;
  const highest = naiveOf(wallAt(untilMs, timeZone)) + SLACK_MS;
  for (let day = startOfDay(lowest); day <= highest; day += DAY_MS) {
    if (!cronMatchesDay(schedule, wallOfNaive(day))) continue;
    for (const hour of schedule.hours) {
      for (const minute of schedule.minutes) {
        const naive = day + hour * 3_600_000 + minute * MINUTE_MS;
        if (naive < lowest || naive > highest) continue;
        const instant = instantOf(wallOfNaive(naive), timeZone);
        if (instant > tMs) return instant <= untilMs ? instant : undefined;
      }
    }
  }
  return undefined;
}

function startOfDay(naiveMs: number): number {
  return Math.floor(naiveMs / DAY_MS) * DAY_MS;
}
