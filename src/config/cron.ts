/**
 * Five-field cron expressions (`minute hour day-of-month month day-of-week`), as a recurring
 * silence's `cron` says when its window opens: read by node-cron's parser into plain sets of
 * values, and matched against a wall-clock time. Pure; no time zone here (`alerts/rules/zone-clock.ts`
 * has those, and `alerts/rules/silence-window.ts` turns matches into instants, across summer time).
 *
 * Each field is `*`, a value, a range `a-b` (one that wraps, `fri-mon`, runs through the end),
 * a step `*\/n` or `a-b/n`, or a list of these separated by commas. Months may be written
 * `jan`..`dec`, days of the week `sun`..`sat` (0 and 7 are both Sunday). As in Vixie cron, when
 * both day fields are restricted a day matches if either does.
 */
import cron from "node-cron";

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

/** node-cron's field names, as the configuration's problems say them. */
const FIELD_NAMES: Readonly<Record<string, string>> = {
  minute: "minute",
  hour: "hour",
  dayOfMonth: "day of month",
  month: "month",
  dayOfWeek: "day of week",
};

const FIELD_SYNTAX = "values, names, ranges a-b, steps */n or a-b/n, lists with commas";

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
  const checked = cron.validateDetailed(parts.join(" "));
  const fields = checked.fields;
  if (!checked.valid || fields === undefined) {
    const error = checked.errors[0];
    if (error?.message.includes("impossible") === true) {
      return { ok: false, problem: "never matches: no chosen month has the chosen days of month" };
    }
    return { ok: false, problem: fieldProblem(error?.field ?? "", error?.value ?? expression) };
  }
  // `L` (last day) and `#` (nth weekday) have no meaning in a silence's window.
  for (const [field, values] of Object.entries(fields)) {
    const word = (values as readonly (number | string)[]).find((v) => typeof v === "string");
    if (word !== undefined) return { ok: false, problem: fieldProblem(field, word) };
  }
  const sorted = (values: readonly (number | string)[]): number[] =>
    [...new Set(values.map(Number))].sort((a, b) => a - b);
  const unrestricted = (text: string | undefined) => text === "*" || text === "?";
  return {
    ok: true,
    schedule: {
      minutes: sorted(fields.minute),
      hours: sorted(fields.hour),
      daysOfMonth: sorted(fields.dayOfMonth),
      months: sorted(fields.month),
      daysOfWeek: sorted(fields.dayOfWeek.map((d) => Number(d) % 7)),
      daysOfMonthRestricted: !unrestricted(parts[2]),
      daysOfWeekRestricted: !unrestricted(parts[4]),
    },
  };
}

function fieldProblem(field: string, value: string): string {
  const name = FIELD_NAMES[field];
  return name === undefined
    ? `${JSON.stringify(value)} is not a cron expression (${FIELD_SYNTAX})`
    : `the ${name} field ${JSON.stringify(value)} is not valid (${FIELD_SYNTAX})`;
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
