import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseRetryAfter } from "../../src/api/retry-after.js";

const NOW = Date.UTC(2025, 5, 1, 12, 0, 0);

describe("parseRetryAfter", () => {
  it("reads delay-seconds", () => {
    expect(parseRetryAfter("0", NOW)).toBe(0);
    expect(parseRetryAfter("7", NOW)).toBe(7000);
    expect(parseRetryAfter(" 120 ", NOW)).toBe(120_000);
  });

  it("reads the three HTTP-date forms against the given now", () => {
    expect(parseRetryAfter("Sun, 01 Jun 2025 12:00:30 GMT", NOW)).toBe(30_000);
    expect(parseRetryAfter("Sunday, 01-Jun-25 12:00:05 GMT", NOW)).toBe(5_000);
    // asctime carries no zone; HTTP dates are GMT whatever the local time zone.
    expect(parseRetryAfter("Sun Jun  1 12:01:00 2025", NOW)).toBe(60_000);
  });

  it("treats a date in the past as no delay", () => {
    expect(parseRetryAfter("Sun, 01 Jun 2025 11:00:00 GMT", NOW)).toBe(0);
  });

  it("uses the first value of a repeated header", () => {
    expect(parseRetryAfter(["3", "9"], NOW)).toBe(3000);
  });

  it.each([
    [undefined],
    [""],
    ["  "],
    ["-1"],
    ["1.5"],
    ["soon"],
    ["2025-06-01T12:00:00Z"],
    ["Mon, garbage"],
    [[]],
  ])("ignores %j", (value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });

  it("round-trips any whole number of seconds and any IMF-fixdate (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), (seconds) => {
        expect(parseRetryAfter(String(seconds), NOW)).toBe(seconds * 1000);
      }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: -86_400, max: 86_400 }),
        fc.integer({ min: 0, max: 999 }),
        (offsetSeconds, nowJitterMs) => {
          const now = NOW + nowJitterMs;
          const at = NOW + offsetSeconds * 1000;
          expect(parseRetryAfter(new Date(at).toUTCString(), now)).toBe(Math.max(0, at - now));
        },
      ),
    );
  });
});
