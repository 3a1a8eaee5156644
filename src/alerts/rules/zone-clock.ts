/**
 * Wall clocks in IANA time zones, over `Intl.DateTimeFormat`: what a clock in a zone shows at an
 * instant, and the instant at which it shows a given minute. Pure (no clock is read).
 *
 * A wall-clock minute that a change to summer time skips (02:30 on the night the clock jumps
 * from 02:00 to 03:00) is taken as the instant of the jump; one that a change back to winter
 * time repeats is taken at its first occurrence. So each wall-clock minute names one instant,
 * and a later minute never names an earlier instant (as cron runs a job once, right after a
 * skipped hour).
 */
import type { WallMinute } from "../../config/cron.js";

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The zone's offset from UTC at an instant, in ms (Berlin in summer: 7_200_000). */
export function offsetAt(instantMs: number, timeZone: string): number {
  const second = Math.floor(instantMs / 1000) * 1000;
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(second)) {
    if (p.type !== "literal") parts[p.type] = Number(p.value);
  }
  const wall = Date.UTC(
    parts["year"] ?? 0,
    (parts["month"] ?? 1) - 1,
    parts["day"] ?? 1,
    parts["hour"] ?? 0,
    parts["minute"] ?? 0,
    parts["second"] ?? 0,
  );
  return wall - second;
}

/** The wall-clock minute the zone shows at an instant. */
export function wallAt(instantMs: number, timeZone: string): WallMinute {
  return wallOfNaive(instantMs + offsetAt(instantMs, timeZone));
}

/** A wall-clock minute as ms on a UTC time line ("naive" time: no zone). */
export function naiveOf(wall: WallMinute): number {
  return Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute);
}

export function wallOfNaive(naiveMs: number): WallMinute {
  const d = new Date(Math.floor(naiveMs / MINUTE_MS) * MINUTE_MS);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
  };
}

/**
 * The instant at which the zone's clock shows `wall` (its first occurrence when repeated; the
 * instant of the jump when skipped). Assumes at most one offset change within a day of it.
 */
export function instantOf(wall: WallMinute, timeZone: string): number {
  const naive = naiveOf(wall);
  const before = offsetAt(naive - DAY_MS, timeZone);
  const after = offsetAt(naive + DAY_MS, timeZone);
  const candidates = [...new Set([naive - before, naive - after])].filter(
    (instant) => offsetAt(instant, timeZone) === naive - instant,
  );
  if (candidates.length > 0) return Math.min(...candidates);
  if (before === after) return naive - before; // more than one change in a day: best effort
  // Skipped: the first minute on the new offset, between the two readings.
  let lo = naive - before; // on the later side of the jump… when the clock jumps forward
  let hi = naive - after;
  if (lo > hi) [lo, hi] = [hi, lo];
  lo = Math.floor(lo / MINUTE_MS);
  hi = Math.ceil(hi / MINUTE_MS);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(mid * MINUTE_MS, timeZone) === after) hi = mid;
    else lo = mid;
  }
  return hi * MINUTE_MS;
}

/** `2025-03-30 03:00` as the zone's clock shows the instant. */
export function formatWall(instantMs: number, timeZone: string): string {
  const w = wallAt(instantMs, timeZone);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${w.year}-${two(w.month)}-${two(w.day)} ${two(w.hour)}:${two(w.minute)}`;
}
