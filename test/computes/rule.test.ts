/**
 * The rule of when the compute probe may connect (src/computes/rule.ts): examples of each
 * state, and a property over random workloads on a modelled compute that suspends as the real
 * one does (its last activity is now while a session is busy, else the latest end of a
 * statement; idle sessions keep nothing awake). Whatever the clients do and however the probes
 * fail (before their session, in their first statement, or in their second), the probe never
 * connects to a suspended compute, and a compute the clients have left suspends at most one
 * interval (and one probe) after its auto-suspend delay; after a failed probe, at most one
 * further delay.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  afterFailure,
  afterReading,
  listed,
  mayProbe,
  othersActiveAt,
  type ListingFacts,
  type ProbeTrack,
  type RawReading,
  type RuleSettings,
} from "../../src/computes/index.js";

const SETTINGS: RuleSettings = {
  intervalMs: 60_000,
  freshMs: 60_000,
  probeMs: 17_000,
  maxBackoffMs: 16 * 60_000,
};

function facts(over: Partial<ListingFacts> = {}): ListingFacts {
  return {
    active: true,
    startedAt: "2025-01-01T00:00:00Z",
    suspendDelayMs: 300_000,
    listedAtMs: 0,
    ...over,
  };
}

describe("the rule, by example", () => {
  it("never probes an endpoint whose latest listing is not active", () => {
    for (const track of [undefined, listed(undefined, facts())]) {
      const idle = facts({ active: false });
      const next = listed(track, idle);
      expect(next.state).toBe("idle");
      for (const at of [0, 1000, 10 ** 9]) expect(mayProbe(next, idle, at, SETTINGS)).toBe(false);
    }
  });

  it("reads a compute once when it is seen active, while the listing is fresh", () => {
    const f = facts({ listedAtMs: 1000 });
    const track = listed(undefined, f);
    expect(track.state).toBe("waiting");
    expect(mayProbe(track, f, 1000, SETTINGS)).toBe(true);
    // A listing older than `freshMs` no longer says enough.
    expect(mayProbe(track, f, 1000 + SETTINGS.freshMs + 1, SETTINGS)).toBe(false);
  });

  it("goes quiet after a reading that saw only its own activity, until the compute starts again", () => {
    const f = facts();
    const quiet = afterReading(listed(undefined, f), f, 500, undefined, SETTINGS);
    expect(quiet.state).toBe("quiet");
    for (const at of [500, 60_500, 10 ** 8]) expect(mayProbe(quiet, f, at, SETTINGS)).toBe(false);
    // The same start, listed again: still quiet.
    expect(listed(quiet, facts({ listedAtMs: 90_000 })).state).toBe("quiet");
    // Suspended and woken again, or restarted: read once more.
    expect(listed(listed(quiet, facts({ active: false })), facts()).state).toBe("waiting");
    expect(listed(quiet, facts({ startedAt: "2025-01-01T01:00:00Z" })).state).toBe("waiting");
  });

  it("follows a compute others use, one interval after their latest activity", () => {
    const f = facts();
    const following = afterReading(listed(undefined, f), f, 2_000, 1_500, SETTINGS);
    expect(following).toMatchObject({ state: "following", dueMs: 61_500, upUntilMs: 301_500 });
    expect(mayProbe(following, f, 61_499, SETTINGS)).toBe(false);
    expect(mayProbe(following, f, 61_500, SETTINGS)).toBe(true);
    // Not once the others' activity no longer keeps it up for the whole probe.
    expect(mayProbe(following, f, 301_500 - SETTINGS.probeMs + 1, SETTINGS)).toBe(false);
  });

  it("reads sooner than the interval when the compute would suspend first", () => {
    const f = facts({ suspendDelayMs: 40_000 });
    const next = afterReading(listed(undefined, f), f, 1_000, 1_000, SETTINGS);
    expect(next).toMatchObject({ state: "following", dueMs: 41_000 - SETTINGS.probeMs });
    // A delay too short to read again within: quiet.
    const short = facts({ suspendDelayMs: 10_000 });
    expect(afterReading(listed(undefined, short), short, 1_000, 1_000, SETTINGS).state).toBe(
      "quiet",
    );
  });

  it("follows a compute that never suspends itself while others use it", () => {
    const f = facts({ suspendDelayMs: null });
    const next = afterReading(listed(undefined, f), f, 1_000, 1_000, SETTINGS);
    expect(next).toMatchObject({ state: "following", upUntilMs: Infinity, dueMs: 61_000 });
  });

  it("retries a failure before any session after a doubling backoff, while others keep the compute up", () => {
    const f = facts({ listedAtMs: 0 });
    const noSession = { session: false } as const;
    const following = afterReading(listed(undefined, f), f, 1_000, 1_000, SETTINGS);
    let track = afterFailure(following, f, 61_000, noSession, SETTINGS);
    expect(track).toMatchObject({ state: "backoff", failures: 1, dueMs: 121_000 });
    expect(mayProbe(track, f, 120_999, SETTINGS)).toBe(false);
    expect(mayProbe(track, f, 121_000, SETTINGS)).toBe(true);
    track = afterFailure(track, f, 121_000, noSession, SETTINGS);
    expect(track).toMatchObject({ failures: 2, dueMs: 121_000 + 120_000 });
    // The others' activity no longer keeps the compute up through a try: not even on a newer
    // listing, which cannot tell whether the probe's own tries are what keep it up.
    expect(mayProbe(track, f, 301_000 - SETTINGS.probeMs + 1, SETTINGS)).toBe(false);
    const newer = facts({ listedAtMs: 400_000 });
    expect(mayProbe(listed(track, newer), newer, 400_000, SETTINGS)).toBe(false);
    for (let i = 0; i < 10; i++) track = afterFailure(track, f, 0, noSession, SETTINGS);
    expect(track.dueMs).toBe(SETTINGS.maxBackoffMs);
    // Never into an endpoint that has become idle.
    const idle = facts({ active: false, listedAtMs: 10 ** 7 });
    expect(mayProbe(listed(track, idle), idle, 10 ** 7, SETTINGS)).toBe(false);
  });

  it("retries a first reading that failed only when the compute starts again", () => {
    const f = facts({ listedAtMs: 0 });
    const track = afterFailure(listed(undefined, f), f, 1_000, { session: false }, SETTINGS);
    const newer = facts({ listedAtMs: 200_000 });
    expect(mayProbe(listed(track, newer), newer, 200_000, SETTINGS)).toBe(false);
    const restarted = facts({ listedAtMs: 300_000, startedAt: "2025-01-01T02:00:00Z" });
    expect(mayProbe(listed(track, restarted), restarted, 300_000, SETTINGS)).toBe(true);
  });

  it("retries a compute that never suspends itself on a newer listing, after the backoff", () => {
    const never = facts({ listedAtMs: 0, suspendDelayMs: null });
    const track = afterFailure(listed(undefined, never), never, 1_000, { session: true }, SETTINGS);
    expect(mayProbe(track, never, 61_000, SETTINGS)).toBe(false);
    const newer = { ...never, listedAtMs: 30_000 };
    expect(mayProbe(listed(track, newer), newer, 30_000, SETTINGS)).toBe(false);
    const later = { ...never, listedAtMs: 70_000 };
    expect(mayProbe(listed(track, later), later, 70_000, SETTINGS)).toBe(true);
  });

  it("goes quiet after a failed session that tells nothing of others", () => {
    const f = facts({ listedAtMs: 0 });
    const following = afterReading(listed(undefined, f), f, 1_000, 1_000, SETTINGS);
    const track = afterFailure(following, f, 61_000, { session: true }, SETTINGS);
    expect(track.state).toBe("quiet");
    const newer = facts({ listedAtMs: 100_000 });
    expect(mayProbe(listed(track, newer), newer, 100_000, SETTINGS)).toBe(false);
  });

  it("schedules a failed session that saw others active as a reading would, and goes quiet when it saw none", () => {
    const f = facts();
    const start = listed(undefined, f);
    const seen = afterFailure(
      start,
      f,
      2_000,
      { session: true, others: { activeAtMs: 1_500 } },
      SETTINGS,
    );
    expect(seen).toMatchObject({
      state: "backoff",
      failures: 1,
      dueMs: 61_500,
      upUntilMs: 301_500,
    });
    expect(mayProbe(seen, f, 61_500, SETTINGS)).toBe(true);
    const alone = afterFailure(
      start,
      f,
      2_000,
      { session: true, others: { activeAtMs: undefined } },
      SETTINGS,
    );
    expect(alone.state).toBe("quiet");
  });
});

describe("others' activity in a reading", () => {
  const reading = (over: Partial<RawReading>): RawReading => ({
    serverNowS: 1000,
    uptimeS: 100,
    connections: 1,
    busy: 0,
    lastIdleChangeS: undefined,
    misses: 0,
    hits: 0,
    used: 0,
    writes: 0,
    hitRatio: undefined,
    ...over,
  });

  it("is now for a busy session, measured from the probe's start", () => {
    expect(othersActiveAt(reading({ busy: 1 }), 990, 60_000, 5_000)).toBe(5_000);
  });

  it("is an idle session's last change only when later than the previous reading", () => {
    expect(othersActiveAt(reading({ lastIdleChangeS: 995 }), 990, 60_000, 5_000)).toBe(0);
    expect(othersActiveAt(reading({ lastIdleChangeS: 985 }), 990, 60_000, 5_000)).toBeUndefined();
    // The first reading looks one interval back.
    expect(othersActiveAt(reading({ lastIdleChangeS: 950 }), undefined, 60_000, 5_000)).toBe(
      5_000 - 50_000,
    );
    expect(
      othersActiveAt(reading({ lastIdleChangeS: 930 }), undefined, 60_000, 5_000),
    ).toBeUndefined();
  });
});

/** A client's session: it connects at `at`, runs one statement for `busyMs`, stays `idleMs`. */
interface Session {
  readonly at: number;
  readonly busyMs: number;
  readonly idleMs: number;
}

/** How a probe ends: read, or failed before its session, in its first statement, in its second. */
type Outcome = "read" | "connect" | "sessions" | "view";

interface Workload {
  readonly intervalMs: number;
  readonly suspendDelayMs: number | null;
  readonly sessions: readonly Session[];
  /** How each probe ends, in turn (cycled; none: every probe reads). */
  readonly outcomes: readonly Outcome[];
  /** How often the endpoint is listed besides on each change of state. */
  readonly refreshMs: number;
}

const STEP = 100;
const TICK = 1000;
const PROBE = 100;

/**
 * Runs the rule against a modelled compute, with listings that arrive on every change of
 * state and every `refreshMs`; returns what went wrong.
 */
function simulate(w: Workload): string[] {
  const rule: RuleSettings = {
    intervalMs: w.intervalMs,
    freshMs: Math.max(w.intervalMs, 5_000),
    probeMs: 3 * PROBE + 200,
    maxBackoffMs: 16 * w.intervalMs,
  };
  const sessions = [...w.sessions].sort((a, b) => a.at - b.at);
  const end = (sessions.at(-1)?.at ?? 0) + 3 * (w.suspendDelayMs ?? 0) + 4 * w.intervalMs;
  const problems: string[] = [];
  let active = false;
  let startedAt = 0;
  /** The compute's last activity: the end of a statement (the clients' or the probe's). */
  let lastActivity = -Infinity;
  /** The clients' last activity, for the bound on when the compute suspends. */
  let othersLast = -Infinity;
  let connected: { start: number; busyUntil: number; leaveAt: number }[] = [];
  let listing: ListingFacts = {
    active: false,
    startedAt: undefined,
    suspendDelayMs: w.suspendDelayMs,
    listedAtMs: 0,
  };
  const list = (t: number) => {
    listing = { ...listing, active, startedAt: String(startedAt), listedAtMs: t };
  };
  let track: ProbeTrack | undefined;
  let previousS: number | undefined;
  let probes = 0;
  let failed = false;
  let next = 0;
  for (let t = 0; t <= end; t += STEP) {
    while (next < sessions.length && (sessions[next]?.at ?? Infinity) <= t) {
      const s = sessions[next++]!;
      if (!active) {
        active = true;
        startedAt = t;
        previousS = undefined;
        list(t);
      }
      connected.push({ start: t, busyUntil: t + s.busyMs, leaveAt: t + s.busyMs + s.idleMs });
    }
    connected = connected.filter((c) => c.leaveAt > t);
    for (const c of connected) {
      const last = Math.min(t, c.busyUntil);
      lastActivity = Math.max(lastActivity, last);
      othersLast = Math.max(othersLast, last);
    }
    if (active && w.suspendDelayMs !== null && t - lastActivity >= w.suspendDelayMs) {
      active = false;
      connected = [];
      list(t);
    }
    if (active && w.suspendDelayMs !== null) {
      // One interval past the delay; a retry after a failure may add one more delay.
      const extra = failed ? Math.max(w.intervalMs, w.suspendDelayMs) : w.intervalMs;
      const bound = othersLast + w.suspendDelayMs + extra + TICK + rule.probeMs;
      if (t > bound) {
        problems.push(`still active at ${t} ms; the clients left at ${othersLast} ms`);
        break;
      }
    }
    if (t % w.refreshMs === 0) list(t);
    if (t % TICK !== 0) continue;
    track = listed(track, listing);
    if (!mayProbe(track, listing, t, rule)) continue;
    if (!active) {
      problems.push(`connected at ${t} ms to a suspended compute`);
      break;
    }
    const outcome = w.outcomes.length === 0 ? "read" : w.outcomes[probes % w.outcomes.length]!;
    probes += 1;
    if (outcome !== "read") failed = true;
    if (outcome === "connect") {
      // No session: nothing the compute counts as activity.
      track = afterFailure(track, listing, t + PROBE, { session: false }, rule);
      continue;
    }
    // The probe's own session is activity, failed or not.
    lastActivity = Math.max(lastActivity, t + PROBE);
    if (outcome === "sessions") {
      track = afterFailure(track, listing, t + PROBE, { session: true }, rule);
      continue;
    }
    const busy = connected.filter((c) => c.busyUntil > t).length;
    const idleChanges = connected.filter((c) => c.busyUntil <= t).map((c) => c.busyUntil);
    const reading: RawReading = {
      serverNowS: t / 1000,
      uptimeS: (t - startedAt) / 1000,
      connections: connected.length,
      busy,
      lastIdleChangeS: idleChanges.length === 0 ? undefined : Math.max(...idleChanges) / 1000,
      misses: 0,
      hits: 0,
      used: 0,
      writes: 0,
      hitRatio: undefined,
    };
    const othersAt = othersActiveAt(reading, previousS, w.intervalMs, t);
    previousS = reading.serverNowS;
    track =
      outcome === "view"
        ? afterFailure(
            track,
            listing,
            t + PROBE,
            { session: true, others: { activeAtMs: othersAt } },
            rule,
          )
        : afterReading(track, listing, t + PROBE, othersAt, rule);
  }
  return problems;
}

describe("the rule, against a modelled compute", () => {
  const session = fc.record({
    at: fc.integer({ min: 0, max: 1_800_000 }).map((ms) => ms - (ms % STEP)),
    busyMs: fc.integer({ min: 0, max: 30_000 }).map((ms) => ms - (ms % STEP)),
    idleMs: fc.integer({ min: 0, max: 900_000 }),
  });
  const workload = fc.record({
    intervalMs: fc.constantFrom(5_000, 15_000, 60_000, 120_000),
    suspendDelayMs: fc.oneof(fc.constantFrom(1_000, 10_000, 60_000, 300_000), fc.constant(null)),
    sessions: fc.array(session, { minLength: 1, maxLength: 12 }),
    outcomes: fc.array(fc.constantFrom<Outcome>("read", "connect", "sessions", "view"), {
      maxLength: 6,
    }),
    refreshMs: fc.constantFrom(30_000, 600_000),
  });

  it("never connects to a suspended compute, nor keeps one awake past one interval", () => {
    fc.assert(
      fc.property(workload, (w) => {
        expect(simulate(w)).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });
});
