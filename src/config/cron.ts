/**
 * Five-field cron expressions (`minute hour day-of-month month day-of-week`), as a recurring
 * silence's `cron` says when its window opens: parsed into plain sets of values, and matched
 * against a wall-clock time. Pure; no time zone here (`alerts/zone-clock.ts` has those).
 *
 * Each field is `*`, a value, a range `a-b`, a step `*\/n` or `a-b/n` or `a/n`, or a list of
 * these separated by commas. Months may be written `jan`..`dec`, days of the week `sun`..`sat`
 * (0 and 7 are both Sunday). As in Vixie cron, when both day fields are restricted a day
 * matches if either does.
 */

/** What a cron expression matches, as sets of values (sorted, without repeats). */
export interface CronSchedule {
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  readonly daysOfMonth: readonly number[];
  /** 1..12. */
  readonly months: readonly number[];
  /** 0..6, Sunday is 0. */
  readonly daysOfWeek: readonly number[];
  /** The day-of-month field is not `*` (with both restricted, either day field matches). */
  readonly daysOfMonthRestricted: boolean;
  readonly daysOfWeekRestricted: boolean;
}

/** A wall-clock minute (no time zone): what a clock on the wall in some zone shows. */
export interface WallMinute {
  readonly year: number;
  /** 1..12. */
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
}

interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
}

const FIELDS: readonly FieldSpec[] = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  {
    name: "month",
    min: 1,
    max: 12,
    names: ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
  },
  {
    name: "day of week",
    min: 0,
    max: 7,
    names: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"],
  },
];

/** Most days each month can have (February: 29, in leap years). */
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The schedule an expression means, or the problem with it (one sentence, for the config). */
export function parseCron(
  expression: string,
): { ok: true; schedule: CronSchedule } | { ok: false; problem: string } {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5 || parts[0] === "") {
    return {
      ok: false,
      problem: `must have five fields (minute hour day-of-month month day-of-week), not ${parts[0] === "" ? 0 : parts.length}`,
    };
  }
  const sets: number[][] = [];
  for (const [i, spec] of FIELDS.entries()) {
    const text = parts[i] ?? "";
    const values = parseField(text.toLowerCase(), spec);
    if (values === undefined) {
      return {
        ok: false,
        problem: `the ${spec.name} field ${JSON.stringify(text)} is not valid (values ${spec.min}-${spec.max}${spec.names === undefined ? "" : " or names"}, ranges a-b, steps /n, lists with commas)`,
      };
    }
    sets.push(values);
  }
  const [minutes = [], hours = [], daysOfMonth = [], months = [], rawDaysOfWeek = []] = sets;
  const daysOfWeek = [...new Set(rawDaysOfWeek.map((d) => d % 7))].sort((a, b) => a - b);
  const schedule: CronSchedule = {
    minutes,
    hours,
    daysOfMonth,
    months,
    daysOfWeek,
    daysOfMonthRestricted: parts[2] !== "*",
    daysOfWeekRestricted: parts[4] !== "*",
  };
  // A day of month that no chosen month has (`0 0 30 2 *`) would never match.
  if (schedule.daysOfMonthRestricted && !schedule.daysOfWeekRestricted) {
    const longest = Math.max(...months.map((m) => MONTH_DAYS[m - 1] ?? 0));
    if (Math.min(...daysOfMonth) > longest) {
      return { ok: false, problem: "never matches: no chosen month has the chosen days of month" };
    }
  }
  return { ok: true, schedule };
}

/** Whether the schedule matches a wall-clock minute. */
export function cronMatches(schedule: CronSchedule, wall: WallMinute): boolean {
  return (
    schedule.minutes.includes(wall.minute) &&
    schedule.hours.includes(wall.hour) &&
    cronMatchesDay(schedule, wall)
  );
}

/** Whether the schedule matches some minute of the wall-clock day (`hour`, `minute` ignored). */
export function cronMatchesDay(
  schedule: CronSchedule,
  wall: Pick<WallMinute, "year" | "month" | "day">,
): boolean {
  if (!schedule.months.includes(wall.month)) return false;
  const dom = schedule.daysOfMonth.includes(wall.day);
  const dow = schedule.daysOfWeek.includes(
    new Date(Date.UTC(wall.year, wall.month - 1, wall.day)).getUTCDay(),
  );
  if (schedule.daysOfMonthRestricted && schedule.daysOfWeekRestricted) return dom || dow;
  return dom && dow;
}

/** The values a field allows, or undefined when it is not valid. */
function parseField(text: string, spec: FieldSpec): number[] | undefined {
  const values = new Set<number>();
  for (const item of text.split(",")) {
    const match = /^(\*|[a-z0-9]+(?:-[a-z0-9]+)?)(?:\/(\d+))?$/.exec(item);
    if (match === null) return undefined;
    const [, range = "", stepText] = match;
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1 || step > spec.max) return undefined;
    let from: number | undefined;
    let to: number | undefined;
    if (range === "*") {
      from = spec.min;
      to = spec.name === "day of week" ? 6 : spec.max;
    } else {
      const [a = "", b] = range.split("-");
      from = valueOf(a, spec);
      // `a/n` runs from a to the end of the field.
      to = b === undefined ? (stepText === undefined ? from : spec.max) : valueOf(b, spec);
    }
    if (from === undefined || to === undefined || from > to) return undefined;
    for (let v = from; v <= to; v += step) values.add(v);
  }
  return [...values].sort((a, b) => a - b);
}

function valueOf(text: string, spec: FieldSpec): number | undefined {
  const named = spec.names?.indexOf(text) ?? -1;
  if (named >= 0) return named + (spec.name === "month" ? 1 : 0);
  if (!/^\d+$/.test(text)) return undefined;
  const value = Number(text);
  return value >= spec.min && value <= spec.max ? value : undefined;
}
