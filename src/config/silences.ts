/**
 * `silences:` in the configuration: quiet windows in which matching alerts are not sent. Each
 * has match conditions (as a routing rule's), optionally the sinks it covers, and exactly one
 * window: a one-off (`start`, `end`) or a recurring one (`cron`, `duration`, `timezone`).
 * Parsed here into a shape where a silence is one or the other, never half of each; when a
 * window is active is decided in `alerts/rules/silence-window.ts`.
 */
import { z } from "zod";
import { ALERT_KINDS, type AlertKind } from "../store/index.js";
import { parseCron, type CronSchedule } from "./cron.js";
import { durationSchema } from "./duration.js";

/** Longest recurring window: a longer one would be better written as a one-off. */
const MAX_RECURRING_SECONDS = 31 * 86_400;

/** A one-off window: active from `startMs` (inclusive) to `endMs` (exclusive). */
export interface OneOffWindow {
  readonly kind: "one_off";
  /** As written (RFC 3339 with an offset), for messages. */
  readonly start: string;
  readonly end: string;
  readonly startMs: number;
  readonly endMs: number;
}

/** A recurring window: opens at every minute the expression matches in the zone. */
export interface RecurringWindow {
  readonly kind: "recurring";
  /** As written, for messages. */
  readonly cron: string;
  readonly schedule: CronSchedule;
  readonly durationSeconds: number;
  /** IANA time zone name the expression is read in. */
  readonly timeZone: string;
}

export type SilenceWindow = OneOffWindow | RecurringWindow;

export interface SilenceConfig {
  readonly name: string;
  readonly comment: string | undefined;
  /** Every list given must contain the alert's value (as a routing rule). */
  readonly match: {
    readonly projects?: readonly string[] | undefined;
    readonly actions?: readonly string[] | undefined;
    readonly statuses?: readonly string[] | undefined;
    readonly kinds?: readonly AlertKind[] | undefined;
  };
  /** The sinks it silences; undefined: every sink. */
  readonly sinks: readonly string[] | undefined;
  readonly window: SilenceWindow;
}

/** RFC 3339 date-time with a required offset (`Z` or `±hh:mm`). */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/** Epoch ms of an RFC 3339 date-time with an offset, or undefined when it is not one. */
export function parseRfc3339(text: string): number | undefined {
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const fraction = m[7] === undefined ? 0 : Math.floor(Number(m[7]) * 1000);
  const local = Date.UTC(year, month - 1, day, hour, minute, second);
  const back = new Date(local);
  const fieldsHold =
    back.getUTCFullYear() === year &&
    back.getUTCMonth() === month - 1 &&
    back.getUTCDate() === day &&
    back.getUTCHours() === hour &&
    back.getUTCMinutes() === minute &&
    back.getUTCSeconds() === second;
  if (!fieldsHold) return undefined;
  const offsetHours = Number(m[10] ?? 0);
  const offsetMinutes = Number(m[11] ?? 0);
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  const offsetMs = (m[9] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return local + fraction - offsetMs;
}

/** Whether `name` is a time zone this runtime knows (an IANA name such as `Europe/Berlin`). */
export function isTimeZone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const list = z.array(z.string().min(1)).min(1);

const silenceInputSchema = z
  .object({
    /** Names the silence on the status page, in check-config and in logs. */
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "must be lowercase letters, digits, - or _"),
    /** Why: shown with the silence. */
    comment: z.string().max(500).optional(),
    projects: list.optional(),
    actions: list.optional(),
    statuses: list.optional(),
    kinds: z.array(z.enum(ALERT_KINDS)).min(1).optional(),
    /** Only these sinks are silenced (default: all). */
    sinks: list.optional(),
    /** One-off window: RFC 3339 with an offset, e.g. 2025-06-01T22:00:00+02:00. */
    start: z.string().optional(),
    end: z.string().optional(),
    /** Recurring window: a five-field cron expression saying when it opens… */
    cron: z.string().optional(),
    /** …how long it stays open each time… */
    duration: durationSchema.optional(),
    /** …and the time zone the expression is read in (default UTC). */
    timezone: z.string().optional(),
  })
  .strict();

type SilenceInput = z.infer<typeof silenceInputSchema>;

/** One silence, with exactly one window; wrong combinations are named by their path. */
export const silenceSchema = silenceInputSchema.transform((input, ctx): SilenceConfig => {
  const problem = (path: string | undefined, message: string) => {
    ctx.addIssue({ code: "custom", path: path === undefined ? [] : [path], message });
  };
  const window = windowOf(input, problem);
  if (window === undefined) return z.NEVER;
  return {
    name: input.name,
    comment: input.comment,
    match: {
      projects: input.projects,
      actions: input.actions,
      statuses: input.statuses,
      kinds: input.kinds,
    },
    sinks: input.sinks,
    window,
  };
});

function windowOf(
  input: SilenceInput,
  problem: (path: string | undefined, message: string) => void,
): SilenceWindow | undefined {
  const oneOff = input.start !== undefined || input.end !== undefined;
  const recurring =
    input.cron !== undefined || input.duration !== undefined || input.timezone !== undefined;
  if (
    oneOff &&
    input.timezone !== undefined &&
    input.cron === undefined &&
    input.duration === undefined
  ) {
    problem("timezone", "applies only to a recurring window (start and end carry their offsets)");
    return undefined;
  }
  if (oneOff && recurring) {
    problem(
      undefined,
      "has both a one-off window (start, end) and a recurring one (cron, duration, timezone): keep one",
    );
    return undefined;
  }
  if (!oneOff && !recurring) {
    problem(
      undefined,
      "needs a window: start and end (a one-off), or cron and duration (recurring)",
    );
    return undefined;
  }
  return oneOff ? oneOffWindow(input, problem) : recurringWindow(input, problem);
}

function oneOffWindow(
  input: SilenceInput,
  problem: (path: string | undefined, message: string) => void,
): OneOffWindow | undefined {
  const parse = (key: "start" | "end"): number | undefined => {
    const text = input[key];
    if (text === undefined) {
      problem(key, `is required with ${key === "start" ? "end" : "start"} (a one-off window)`);
      return undefined;
    }
    const ms = parseRfc3339(text);
    if (ms === undefined) {
      problem(
        key,
        `not an RFC 3339 date-time with an offset (e.g. 2025-06-01T22:00:00+02:00 or …Z): ${JSON.stringify(text)}`,
      );
    }
    return ms;
  };
  const startMs = parse("start");
  const endMs = parse("end");
  if (startMs === undefined || endMs === undefined) return undefined;
  if (endMs <= startMs) {
    problem("end", `must be after start (${input.start ?? ""})`);
    return undefined;
  }
  return { kind: "one_off", start: input.start ?? "", end: input.end ?? "", startMs, endMs };
}

function recurringWindow(
  input: SilenceInput,
  problem: (path: string | undefined, message: string) => void,
): RecurringWindow | undefined {
  let ok = true;
  let schedule: CronSchedule | undefined;
  if (input.cron === undefined) {
    problem("cron", "is required with duration and timezone (a recurring window)");
    ok = false;
  } else {
    const parsed = parseCron(input.cron);
    if (parsed.ok) schedule = parsed.schedule;
    else {
      problem("cron", parsed.problem);
      ok = false;
    }
  }
  const duration = input.duration;
  if (duration === undefined) {
    problem("duration", "is required with cron: how long the window stays open (e.g. 2h)");
    ok = false;
  } else if (duration < 60 || duration > MAX_RECURRING_SECONDS) {
    problem("duration", "must be between 1m and 31d");
    ok = false;
  }
  const timeZone = input.timezone ?? "UTC";
  if (!isTimeZone(timeZone)) {
    problem("timezone", `not a known IANA time zone name (e.g. Europe/Berlin): ${timeZone}`);
    ok = false;
  }
  if (!ok || schedule === undefined || duration === undefined || input.cron === undefined) {
    return undefined;
  }
  return {
    kind: "recurring",
    cron: input.cron,
    schedule,
    durationSeconds: duration,
    timeZone,
  };
}

/** `silences:`: names are unique. */
export const silencesSchema = z
  .array(silenceSchema)
  .default([])
  .superRefine((silences, ctx) => {
    const seen = new Set<string>();
    silences.forEach((s, i) => {
      if (seen.has(s.name)) {
        ctx.addIssue({ code: "custom", path: [i, "name"], message: `repeats ${s.name}` });
      }
      seen.add(s.name);
    });
  });
