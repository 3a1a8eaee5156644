/**
 * When a silence's window is open: one-off windows on [start, end), recurring ones from each
 * opening of their cron expression in their time zone for their duration, across changes to and
 * from summer time. The property tests check the module against a brute-force reading that goes
 * minute by minute over real time (the module goes the other way, from wall clocks to instants).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cronMatches, parseCron } from "../../src/config/cron.js";
import type { OneOffWindow, RecurringWindow } from "../../src/config/silences.js";
import { isActive, windowState } from "../../src/alerts/rules/silence-window.js";
import { instantOf, offsetAt, wallAt } from "../../src/alerts/rules/zone-clock.js";

const MIN = 60_000;
const HOUR = 3_600_000;
const t = (iso: string) => Date.parse(iso);

function recurring(cron: string, durationSeconds: number, timeZone = "UTC"): RecurringWindow {
  const parsed = parseCron(cron);
  if (!parsed.ok) throw new Error(parsed.problem);
  return { kind: "recurring", cron, schedule: parsed.schedule, durationSeconds, timeZone };
}

function oneOff(startMs: number, endMs: number): OneOffWindow {
  return { kind: "one_off", start: "", end: "", startMs, endMs };
}

describe("cron expressions", () => {
  it("reads fields, ranges, steps, lists and names; Sunday is 0 or 7", () => {
    const parsed = parseCron("*/20 9-17/4 1,15 jan-mar MON-fri,7");
    expect(parsed).toMatchObject({
      ok: true,
      schedule: {
        minutes: [0, 20, 40],
        hours: [9, 13, 17],
        daysOfMonth: [1, 15],
        months: [1, 2, 3],
        daysOfWeek: [0, 1, 2, 3, 4, 5],
      },
    });
  });

  it("reads a range that wraps as running through the end of the field", () => {
    expect(parseCron("0 22 * * fri-mon")).toMatchObject({
      ok: true,
      schedule: { daysOfWeek: [0, 1, 5, 6], daysOfWeekRestricted: true },
    });
    expect(parseCron("0 0 30-2 * *")).toMatchObject({
      ok: true,
      schedule: { daysOfMonth: [1, 2, 30, 31] },
    });
  });

  it("names what is wrong", () => {
    expect(parseCron("0 22 * *")).toEqual({
      ok: false,
      problem: "must have five fields (minute hour day-of-month month day-of-week), not 4",
    });
    expect(parseCron("0 0 * * * *")).toMatchObject({ ok: false });
    expect(parseCron("61 * * * *")).toMatchObject({
      ok: false,
      problem: expect.stringContaining('the minute field "61" is not valid') as string,
    });
    expect(parseCron("0 0 L * *")).toMatchObject({
      ok: false,
      problem: expect.stringContaining('the day of month field "L" is not valid') as string,
    });
    expect(parseCron("0 0 * * 1#2")).toMatchObject({ ok: false });
    expect(parseCron("*/0 * * * *")).toMatchObject({ ok: false });
    expect(parseCron("0 0 30 2 *")).toEqual({
      ok: false,
      problem: "never matches: no chosen month has the chosen days of month",
    });
  });

  it("matches a day when either restricted day field does (as Vixie cron)", () => {
    const parsed = parseCron("0 0 1 * mon");
    if (!parsed.ok) throw new Error(parsed.problem);
    const wall = { year: 2025, month: 6, hour: 0, minute: 0 };
    expect(cronMatches(parsed.schedule, { ...wall, day: 1 })).toBe(true); // a Sunday
    expect(cronMatches(parsed.schedule, { ...wall, day: 2 })).toBe(true); // a Monday
    expect(cronMatches(parsed.schedule, { ...wall, day: 3 })).toBe(false);
  });
});

describe("one-off windows", () => {
  it("are open from start (inclusive) to end (exclusive), and never open again", () => {
    const w = oneOff(t("2025-06-01T20:00:00Z"), t("2025-06-01T22:00:00Z"));
    expect(windowState(w, w.startMs - 1)).toEqual({ active: false, nextMs: w.startMs });
    expect(windowState(w, w.startMs)).toEqual({ active: true, untilMs: w.endMs });
    expect(windowState(w, w.endMs - 1)).toEqual({ active: true, untilMs: w.endMs });
    expect(windowState(w, w.endMs)).toEqual({ active: false, nextMs: undefined });
  });

  it("is open exactly on [start, end) (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4e12 }),
        fc.integer({ min: 1, max: 1e9 }),
        fc.integer({ min: -2e9, max: 2e9 }),
        (start, length, offset) => {
          const w = oneOff(start, start + length);
          const at = start + offset;
          expect(isActive(w, at)).toBe(at >= start && at < start + length);
        },
      ),
    );
  });
});

describe("recurring windows", () => {
  it("open at each match for their duration, weekday nights in New York", () => {
    const w = recurring("0 22 * * 1-5", 2 * 3600, "America/New_York");
    // Friday 2025-06-06 22:00 EDT is 2025-06-07T02:00Z.
    expect(windowState(w, t("2025-06-07T01:59:59Z"))).toEqual({
      active: false,
      nextMs: t("2025-06-07T02:00:00Z"),
    });
    expect(windowState(w, t("2025-06-07T03:30:00Z"))).toEqual({
      active: true,
      untilMs: t("2025-06-07T04:00:00Z"),
    });
    // Saturday night is not a weekday: the next opening is Monday 22:00 EDT.
    expect(windowState(w, t("2025-06-07T04:00:00Z"))).toEqual({
      active: false,
      nextMs: t("2025-06-10T02:00:00Z"),
    });
  });

  it("open right after the jump when their start is skipped by the change to summer time", () => {
    // Berlin, 2025-03-30: 02:00 CET becomes 03:00 CEST at 01:00Z; 02:30 does not exist.
    const w = recurring("30 2 * * *", 3600, "Europe/Berlin");
    expect(isActive(w, t("2025-03-30T00:59:00Z"))).toBe(false);
    expect(windowState(w, t("2025-03-30T01:00:00Z"))).toEqual({
      active: true,
      untilMs: t("2025-03-30T02:00:00Z"),
    });
    expect(isActive(w, t("2025-03-30T02:00:00Z"))).toBe(false);
    // The day before and after, 02:30 is 01:30Z (CET) and 00:30Z (CEST).
    expect(windowState(w, t("2025-03-29T01:30:00Z"))).toMatchObject({ active: true });
    expect(windowState(w, t("2025-03-30T03:00:00Z"))).toEqual({
      active: false,
      nextMs: t("2025-03-31T00:30:00Z"),
    });
  });

  it("open once when their start repeats on the change back to winter time", () => {
    // Berlin, 2025-10-26: 03:00 CEST becomes 02:00 CET at 01:00Z; 02:30 happens twice.
    const w = recurring("30 2 * * *", 1800, "Europe/Berlin");
    expect(windowState(w, t("2025-10-26T00:30:00Z"))).toEqual({
      active: true,
      untilMs: t("2025-10-26T01:00:00Z"),
    });
    expect(windowState(w, t("2025-10-26T01:30:00Z"))).toEqual({
      active: false,
      nextMs: t("2025-10-27T01:30:00Z"),
    });
    // A window across the change lasts its duration in real time (3 h, not 4).
    const long = recurring("0 1 * * *", 3 * 3600, "Europe/Berlin");
    expect(windowState(long, t("2025-10-26T00:00:00Z"))).toEqual({
      active: true,
      untilMs: t("2025-10-26T02:00:00Z"),
    });
  });

  it("run on while occurrences overlap, and say when the run ends", () => {
    const always = recurring("*/30 * * * *", 3600);
    expect(windowState(always, t("2025-06-01T00:10:00Z"))).toEqual({
      active: true,
      untilMs: undefined,
    });
    const narrow = recurring("0 8,9 * * *", 90 * 60);
    expect(windowState(narrow, t("2025-06-01T08:10:00Z"))).toEqual({
      active: true,
      untilMs: t("2025-06-01T10:30:00Z"),
    });
  });

  it("find the next opening years away (29 February)", () => {
    const w = recurring("0 12 29 2 *", 3600);
    expect(windowState(w, t("2025-01-01T00:00:00Z"))).toEqual({
      active: false,
      nextMs: t("2028-02-29T12:00:00Z"),
    });
  });
});

describe("recurring windows against a minute-by-minute reading (property)", () => {
  const zones = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe"];
  /** Instants around changes of offset in those zones, in 2025 and 2026. */
  const changes = [
    "2025-03-09T07:00:00Z",
    "2025-03-30T01:00:00Z",
    "2025-04-05T15:00:00Z",
    "2025-10-04T15:30:00Z",
    "2025-10-26T01:00:00Z",
    "2025-11-02T06:00:00Z",
    "2026-03-29T01:00:00Z",
  ].map(t);

  /** Whether real instant `u` (a whole minute) is an opening, read from real time to walls. */
  function opensAt(w: RecurringWindow, u: number): boolean {
    const wall = wallAt(u, w.timeZone);
    const repeated = [30 * MIN, HOUR, 2 * HOUR].some((back) => {
      const earlier = wallAt(u - back, w.timeZone);
      return JSON.stringify(earlier) === JSON.stringify(wall);
    });
    if (cronMatches(w.schedule, wall) && !repeated) return true;
    // The clock jumped forward just now: the minutes it skipped open here.
    const before = offsetAt(u - MIN, w.timeZone);
    const now = offsetAt(u, w.timeZone);
    for (let naive = u + before; naive < u + now; naive += MIN) {
      if (cronMatches(w.schedule, wallAt(naive, "UTC"))) return true;
    }
    return false;
  }

  const cron = fc
    .record({
      minute: fc.constantFrom("0", "15", "30", "*/20", "45"),
      hour: fc.constantFrom("*", "1", "2", "3", "1-3", "2,14", "*/5"),
      dom: fc.constantFrom("*", "*", "1-15", "26,30"),
      dow: fc.constantFrom("*", "*", "0", "1-5", "6"),
    })
    .map((f) => `${f.minute} ${f.hour} ${f.dom} * ${f.dow}`);

  /** A window in a zone, and an instant within six hours of a change of offset. */
  const scenario = fc
    .record({
      expression: cron,
      zone: fc.constantFrom(...zones),
      minutes: fc.integer({ min: 1, max: 300 }),
      change: fc.constantFrom(...changes),
      shift: fc.integer({ min: -6 * 60, max: 6 * 60 }),
    })
    .map((s) => ({
      w: recurring(s.expression, s.minutes * 60, s.zone),
      at: s.change + s.shift * MIN,
    }));

  it("is open at t exactly when some opening lies in (t − duration, t]", () => {
    fc.assert(
      fc.property(scenario, fc.integer({ min: 0, max: 59_999 }), ({ w, at: minute }, ms) => {
        const at = minute + ms;
        let expected = false;
        for (let u = minute; u > at - w.durationSeconds * 1000; u -= MIN) {
          if (opensAt(w, u)) expected = true;
        }
        expect(isActive(w, at)).toBe(expected);
      }),
      { numRuns: 150 },
    );
  });

  it("when closed, stays closed until the next opening, and is open then", () => {
    fc.assert(
      fc.property(scenario, ({ w, at }) => {
        const state = windowState(w, at);
        if (state.active) {
          // Undefined: occurrences run into each other past any end (`0 * * * *` for 1 h).
          if (state.untilMs === undefined) return;
          expect(state.untilMs).toBeGreaterThan(at);
          expect(isActive(w, state.untilMs - 1)).toBe(true);
          expect(isActive(w, state.untilMs)).toBe(false);
        } else {
          expect(state.nextMs).toBeDefined();
          const next = state.nextMs ?? 0;
          expect(next).toBeGreaterThan(at);
          expect(isActive(w, next)).toBe(true);
          expect(isActive(w, next - 1)).toBe(false);
          expect(opensAt(w, next)).toBe(true);
        }
      }),
      { numRuns: 150 },
    );
  });

  it("names each wall-clock minute by its first instant, or by the jump over it", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.constantFrom(...changes),
        fc.integer({ min: -3 * 60, max: 3 * 60 }),
        (zone, change, shift) => {
          // Walls counted on the clock, so that skipped and repeated ones come up.
          const naive = change + offsetAt(change, zone) + shift * MIN;
          const wall = wallAt(naive, "UTC");
          const instant = instantOf(wall, zone);
          const shown = wallAt(instant, zone);
          if (JSON.stringify(shown) === JSON.stringify(wall)) {
            for (const back of [30 * MIN, HOUR, 2 * HOUR]) {
              expect(JSON.stringify(wallAt(instant - back, zone))).not.toBe(JSON.stringify(wall));
            }
          } else {
            // Skipped: the clock jumped from before the wall to after it at this instant.
            const before = instant - MIN + offsetAt(instant - MIN, zone);
            expect(before).toBeLessThan(naive);
            expect(instant + offsetAt(instant, zone)).toBeGreaterThan(naive);
          }
        },
      ),
    );
  });
});
