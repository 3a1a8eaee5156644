/**
 * What one probe makes of the server's answers and of its failures (src/computes/reading.ts):
 * the sessions' summary and the file cache view checked value by value, each failure given a
 * reason from the bounded set and a message that says where it happened, never the password.
 * The probe over a real connection is tested against the simulator's computes in test/pg.
 */
import { describe, expect, it } from "vitest";
import { failure, parseSessions, parseView } from "../../src/computes/reading.js";

const SESSIONS = {
  server_now: 1_700_000_100.5,
  uptime: 100.25,
  connections: 3,
  busy: 1,
  last_idle_change: 1_700_000_099,
};

const VIEW = {
  file_cache_misses: "25",
  file_cache_hits: "975",
  file_cache_used: "128",
  file_cache_writes: "4",
  file_cache_hit_ratio: "97.50",
};

describe("the answers", () => {
  it("reads the sessions' summary, bigints and numerics as the driver gives them", () => {
    expect(parseSessions([SESSIONS])).toEqual({
      serverNowS: 1_700_000_100.5,
      uptimeS: 100.25,
      connections: 3,
      busy: 1,
      lastIdleChangeS: 1_700_000_099,
    });
    expect(parseSessions([{ ...SESSIONS, uptime: null, last_idle_change: null }])).toMatchObject({
      uptimeS: undefined,
      lastIdleChangeS: undefined,
    });
    // A start ahead of the server's clock is no negative uptime.
    expect(parseSessions([{ ...SESSIONS, uptime: -3 }])).toMatchObject({ uptimeS: 0 });
  });

  it("reads the view's one row, and a ratio it does not have yet", () => {
    expect(parseView([VIEW])).toEqual({
      misses: 25,
      hits: 975,
      used: 128,
      writes: 4,
      hitRatio: 97.5,
    });
    expect(parseView([{ ...VIEW, file_cache_hit_ratio: null }])).toMatchObject({
      hitRatio: undefined,
    });
    expect(parseView([{ ...VIEW, file_cache_hit_ratio: "NaN" }])).toMatchObject({
      hitRatio: undefined,
    });
  });

  it("says what is wrong with an answer that is not the view's", () => {
    expect(parseView([])).toBe("neon_stat_file_cache has 0 rows, not 1");
    expect(parseView([VIEW, VIEW])).toBe("neon_stat_file_cache has 2 rows, not 1");
    expect(parseView([{ ...VIEW, file_cache_hits: "-1" }])).toBe(
      'neon_stat_file_cache.file_cache_hits is not a count: "-1"',
    );
    expect(parseView([{ ...VIEW, file_cache_used: "lots" }])).toBe(
      'neon_stat_file_cache.file_cache_used is not a count: "lots"',
    );
    expect(parseView([{ ...VIEW, file_cache_hit_ratio: "150" }])).toBe(
      "neon_stat_file_cache.file_cache_hit_ratio is not a percentage: 150",
    );
    expect(parseSessions([])).toBe("pg_stat_activity gave 0 summary rows, not 1");
    expect(parseSessions([{ ...SESSIONS, connections: 1.5 }])).toBe(
      "pg_stat_activity's summary is not a set of counts",
    );
  });
});

/** An error as the driver raises it: a message, and a SQLSTATE or a Node error code. */
function driverError(message: string, code?: string): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

describe("a failure", () => {
  const PASSWORD = "s3cret-p4ss";

  it.each([
    ["connect", driverError('password authentication failed for user "m"', "28P01"), "auth"],
    ["connect", driverError('database "nope" does not exist', "3D000"), "no_database"],
    ["connect", driverError("connect ECONNREFUSED 127.1.0.1:5432", "ECONNREFUSED"), "unreachable"],
    ["connect", driverError("getaddrinfo ENOTFOUND ep-1.example", "ENOTFOUND"), "unreachable"],
    ["connect", driverError("Connection terminated due to connection timeout"), "unreachable"],
    ["connect", driverError("The server does not support SSL connections"), "tls"],
    ["connect", driverError("self-signed certificate", "DEPTH_ZERO_SELF_SIGNED_CERT"), "tls"],
    ["connect", driverError("sorry, too many clients already", "53300"), "unavailable"],
    ["connect", driverError("the database system is starting up", "57P03"), "unavailable"],
    ["sessions", driverError("canceling statement due to statement timeout", "57014"), "timeout"],
    ["sessions", driverError("Query read timeout"), "timeout"],
    [
      "view",
      driverError('relation "neon_stat_file_cache" does not exist', "42P01"),
      "no_extension",
    ],
    ["view", driverError('column "file_cache_hits" does not exist', "42703"), "view_columns"],
    ["view", driverError("permission denied for view neon_stat_file_cache", "42501"), "permission"],
    ["sessions", driverError('relation "pg_stat_activity" does not exist', "42P01"), "other"],
  ] as const)("in %s: %s is %s", (stage, error, reason) => {
    const result = failure(error, stage, PASSWORD);
    expect(result.reason).toBe(reason);
    expect(result.session).toBe(stage !== "connect");
    expect(result.message.startsWith(stage === "connect" ? "connecting: " : "reading ")).toBe(true);
  });

  it("never repeats the password", () => {
    const result = failure(driverError(`bad option ${PASSWORD} given`), "connect", PASSWORD);
    expect(result.message).toBe("connecting: bad option [redacted] given");
  });
});
