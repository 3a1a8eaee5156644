import { describe, expect, it } from "vitest";
import type { ApiErrorKind, HttpMethod } from "../../src/api/index.js";
import { isRetrySafe, planRetry, type RetryConfig } from "../../src/api/retry-policy.js";

const http = (status: number) => ({ kind: "http" as const, status, code: "" });
const transport = (kind: ApiErrorKind, code: string) => ({ kind, status: undefined, code });
const writes: HttpMethod[] = ["POST", "PATCH", "DELETE"];

describe("isRetrySafe", () => {
  it("retries a GET after 5xx, 429, 423, network errors, timeouts and unreadable answers", () => {
    for (const status of [500, 502, 503, 504, 429, 423]) {
      expect(isRetrySafe("GET", http(status))).toBe(true);
    }
    expect(isRetrySafe("GET", transport("network", "UND_ERR_SOCKET"))).toBe(true);
    expect(isRetrySafe("GET", transport("timeout", "UND_ERR_HEADERS_TIMEOUT"))).toBe(true);
    expect(
      isRetrySafe("GET", { kind: "invalid_response", status: 200, code: "invalid_json" }),
    ).toBe(true);
  });

  it("never retries a client error other than 423 and 429", () => {
    for (const method of ["GET", ...writes] as const) {
      for (const status of [400, 401, 403, 404, 409, 422]) {
        expect(isRetrySafe(method, http(status))).toBe(false);
      }
    }
  });

  it("retries any method on 503, 423 and 429: the request was not processed", () => {
    for (const method of writes) {
      for (const status of [503, 423, 429]) expect(isRetrySafe(method, http(status))).toBe(true);
    }
  });

  it("does not repeat a write that may have taken effect", () => {
    for (const method of writes) {
      for (const status of [500, 502, 504]) expect(isRetrySafe(method, http(status))).toBe(false);
      expect(isRetrySafe(method, transport("network", "UND_ERR_SOCKET"))).toBe(false);
      expect(isRetrySafe(method, transport("network", "ECONNRESET"))).toBe(false);
      expect(isRetrySafe(method, transport("timeout", "UND_ERR_HEADERS_TIMEOUT"))).toBe(false);
      expect(isRetrySafe(method, transport("timeout", "UND_ERR_BODY_TIMEOUT"))).toBe(false);
      expect(
        isRetrySafe(method, { kind: "invalid_response", status: 201, code: "invalid_json" }),
      ).toBe(false);
    }
  });

  it("repeats a write whose connection was never established", () => {
    for (const method of writes) {
      expect(isRetrySafe(method, transport("network", "ECONNREFUSED"))).toBe(true);
      expect(isRetrySafe(method, transport("network", "UND_ERR_CONNECT_TIMEOUT"))).toBe(true);
    }
  });
});

describe("planRetry", () => {
  const config: RetryConfig = {
    maxAttempts: 3,
    backoff: { baseMs: 100, maxMs: 1000 },
    maxRetryAfterMs: 5000,
  };

  it("prefers Retry-After, capped", () => {
    expect(planRetry(1, true, 2000, config, () => 0.5)).toEqual({
      retry: true,
      delayMs: 2000,
      delaySource: "retry-after",
    });
    expect(planRetry(1, true, 3_600_000, config, () => 0.5).delayMs).toBe(5000);
  });

  it("falls back to jittered backoff", () => {
    expect(planRetry(2, true, undefined, config, () => 0.5)).toEqual({
      retry: true,
      delayMs: 100,
      delaySource: "backoff",
    });
  });

  it("stops at the last attempt and for unsafe failures, still telling the delay", () => {
    expect(planRetry(3, true, undefined, config, () => 0.5).retry).toBe(false);
    const unsafe = planRetry(1, false, 1000, config, () => 0.5);
    expect(unsafe).toEqual({ retry: false, delayMs: 1000, delaySource: "retry-after" });
  });
});
