import { describe, expect, it } from "vitest";
import {
  classifyErrorCode,
  classifyOutcome,
  classifyReply,
  classifySlackReply,
  DEFAULT_MAX_RETRY_AFTER_MS,
  type HttpOutcome,
} from "../../../src/alerts/sinks/index.js";

const NOW = Date.UTC(2025, 5, 1, 12, 0, 0);
const opts = { nowMs: NOW };

function reply(status: number, body = "", headers: Record<string, string> = {}): HttpOutcome {
  return { type: "response", status, headers, body };
}

describe("classifyReply (webhook)", () => {
  it.each([200, 201, 202, 204, 299])("%i is ok", (status) => {
    expect(classifyOutcome(reply(status, "anything"), "webhook", opts)).toEqual({ ok: true });
  });

  it.each([
    [400, "client_error", true],
    [401, "client_error", true],
    [403, "client_error", true],
    [404, "client_error", true],
    [410, "client_error", true],
    [413, "client_error", true],
    [422, "client_error", true],
    [409, "client_error", false],
    [425, "client_error", false],
    [408, "timeout", false],
    [429, "rate_limited", false],
    [500, "server_error", false],
    [502, "server_error", false],
    [503, "server_error", false],
    [504, "server_error", false],
    [301, "client_error", true],
    [302, "client_error", true],
    [307, "client_error", true],
  ] as const)("%i → %s (permanent: %s)", (status, reason, permanent) => {
    const result = classifyOutcome(reply(status), "webhook", opts);
    expect(result).toMatchObject({ ok: false, reason, permanent });
    expect(!result.ok && result.detail).toMatch(new RegExp(`^HTTP ${status}`));
  });

  it("reads Retry-After in seconds and as an HTTP date, and caps it", () => {
    expect(classifyReply({ status: 429, headers: { "retry-after": "2" } }, opts)).toMatchObject({
      reason: "rate_limited",
      retryAfterMs: 2000,
    });
    expect(
      classifyReply(
        { status: 429, headers: { "retry-after": "Sun, 01 Jun 2025 12:00:30 GMT" } },
        opts,
      ),
    ).toMatchObject({ retryAfterMs: 30_000 });
    expect(classifyReply({ status: 429, headers: { "retry-after": "86400" } }, opts)).toMatchObject(
      { retryAfterMs: DEFAULT_MAX_RETRY_AFTER_MS },
    );
    expect(
      classifyReply(
        { status: 429, headers: { "retry-after": "120" } },
        { nowMs: NOW, maxRetryAfterMs: 60_000 },
      ),
    ).toMatchObject({ retryAfterMs: 60_000 });
  });

  it("leaves retryAfterMs out when the header is absent or unreadable", () => {
    for (const headers of [{}, { "retry-after": "soon" }, { "retry-after": "-3" }]) {
      const result = classifyReply({ status: 429, headers }, opts);
      expect(result).toMatchObject({ ok: false, reason: "rate_limited" });
      expect("retryAfterMs" in result).toBe(false);
    }
  });

  it("passes Retry-After on with a 503, but not with a permanent failure", () => {
    expect(classifyReply({ status: 503, headers: { "retry-after": "5" } }, opts)).toMatchObject({
      reason: "server_error",
      permanent: false,
      retryAfterMs: 5000,
    });
    expect(
      "retryAfterMs" in classifyReply({ status: 400, headers: { "retry-after": "5" } }, opts),
    ).toBe(false);
  });

  it("ignores the body of a webhook reply", () => {
    const result = classifyOutcome(reply(500, "secret stack trace"), "webhook", opts);
    expect(result).toEqual({
      ok: false,
      reason: "server_error",
      permanent: false,
      detail: "HTTP 500",
    });
  });
});

describe("classifySlackReply", () => {
  it("is ok only for a 2xx whose body is `ok`", () => {
    expect(classifySlackReply({ status: 200, headers: {}, body: "ok" }, opts)).toEqual({
      ok: true,
    });
    expect(classifySlackReply({ status: 200, headers: {}, body: "ok\n" }, opts)).toEqual({
      ok: true,
    });
  });

  it.each(["invalid_payload", "no_text", "invalid_blocks", "channel_is_archived", "no_service"])(
    "a 2xx with Slack's %s is a permanent client error",
    (word) => {
      expect(classifySlackReply({ status: 200, headers: {}, body: word }, opts)).toEqual({
        ok: false,
        reason: "client_error",
        permanent: true,
        detail: `HTTP 200 ${word}`,
      });
    },
  );

  it("a 2xx with any other body is a retryable server error and does not echo the body", () => {
    expect(classifySlackReply({ status: 200, headers: {}, body: "" }, opts)).toEqual({
      ok: false,
      reason: "server_error",
      permanent: false,
      detail: "HTTP 200 unexpected reply",
    });
    expect(
      classifySlackReply({ status: 200, headers: {}, body: "<html>proxy says hi</html>" }, opts),
    ).toMatchObject({ reason: "server_error", detail: "HTTP 200 unexpected reply" });
    expect(classifySlackReply({ status: 200, headers: {}, body: "rollup_error" }, opts)).toEqual({
      ok: false,
      reason: "server_error",
      permanent: false,
      detail: "HTTP 200 rollup_error",
    });
  });

  it("classifies other statuses like the webhook, naming Slack's error word", () => {
    expect(classifySlackReply({ status: 400, headers: {}, body: "invalid_payload" }, opts)).toEqual(
      {
        ok: false,
        reason: "client_error",
        permanent: true,
        detail: "HTTP 400 invalid_payload",
      },
    );
    expect(
      classifySlackReply({ status: 404, headers: {}, body: "no_service" }, opts),
    ).toMatchObject({
      reason: "client_error",
      permanent: true,
    });
    expect(
      classifySlackReply(
        { status: 429, headers: { "retry-after": "1" }, body: "rate_limited" },
        opts,
      ),
    ).toEqual({
      ok: false,
      reason: "rate_limited",
      permanent: false,
      retryAfterMs: 1000,
      detail: "HTTP 429 rate_limited",
    });
    expect(
      classifySlackReply({ status: 500, headers: {}, body: "rollup_error" }, opts),
    ).toMatchObject({
      reason: "server_error",
      permanent: false,
    });
  });
});

describe("transport outcomes", () => {
  it("the deadline and the caller's abort are timeouts", () => {
    expect(classifyOutcome({ type: "deadline", timeoutMs: 250 }, "slack", opts)).toEqual({
      ok: false,
      reason: "timeout",
      permanent: false,
      detail: "timed out after 250 ms",
    });
    expect(classifyOutcome({ type: "aborted" }, "webhook", opts)).toEqual({
      ok: false,
      reason: "timeout",
      permanent: false,
      detail: "aborted",
    });
  });

  it.each([
    "UND_ERR_HEADERS_TIMEOUT",
    "UND_ERR_BODY_TIMEOUT",
    "UND_ERR_CONNECT_TIMEOUT",
    "ETIMEDOUT",
  ])("%s is a timeout", (code) => {
    expect(classifyErrorCode(code)).toEqual({
      ok: false,
      reason: "timeout",
      permanent: false,
      detail: code,
    });
  });

  it.each(["ECONNREFUSED", "ECONNRESET", "UND_ERR_SOCKET", "ENOTFOUND", "EAI_AGAIN", "UNKNOWN"])(
    "%s is a network failure",
    (code) => {
      expect(classifyErrorCode(code)).toEqual({
        ok: false,
        reason: "network",
        permanent: false,
        detail: code,
      });
    },
  );

  it("never echoes a code that is not a plain error code", () => {
    expect(classifyErrorCode("connect to https://hooks.example/T0/B0/xyz")).toEqual({
      ok: false,
      reason: "network",
      permanent: false,
      detail: "network error",
    });
  });
});
