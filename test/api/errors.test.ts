import { inspect } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/api/index.js";
import { toApiError, type AttemptFailure } from "../../src/api/errors.js";

const context = {
  route: "createEndpoint" as const,
  method: "POST" as const,
  requestId: "11111111-2222-4333-8444-555555555555",
  attempts: 2,
  retryable: false,
  secret: "napi_0123456789abcdefSECRET",
};

const failure = (overrides: Partial<AttemptFailure>): AttemptFailure => ({
  kind: "http",
  status: 409,
  code: "",
  detail: "",
  serverRequestId: undefined,
  retryAfterMs: undefined,
  ...overrides,
});

/** Every way an error is likely to be written out. */
function serialised(error: ApiError): string {
  return [
    JSON.stringify(error),
    inspect(error, { depth: 5, showHidden: true }),
    String(error),
    error.stack ?? "",
    JSON.stringify(Object.entries(error)),
  ].join("\n");
}

describe("toApiError", () => {
  it("names the route, status, code, request id and attempt", () => {
    const error = toApiError(
      failure({ code: "CONFLICT", detail: "branch already has a read-write endpoint" }),
      context,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toBe(
      "createEndpoint: HTTP 409 [CONFLICT]: branch already has a read-write endpoint" +
        ` (request id ${context.requestId}, attempt 2)`,
    );
    expect(error.toJSON()).toEqual({
      name: "ApiError",
      message: error.message,
      kind: "http",
      status: 409,
      code: "CONFLICT",
      requestId: context.requestId,
      route: "createEndpoint",
      method: "POST",
      retryable: false,
      attempts: 2,
    });
  });

  it("prefers the request id the server reported", () => {
    const error = toApiError(failure({ serverRequestId: "srv-1" }), context);
    expect(error.requestId).toBe("srv-1");
  });

  it("describes transport and validation failures", () => {
    const network = toApiError(
      failure({
        kind: "network",
        status: undefined,
        code: "UND_ERR_SOCKET",
        detail: "other side closed",
      }),
      context,
    );
    expect(network.message).toMatch(
      /^createEndpoint: network error \[UND_ERR_SOCKET\]: other side closed/,
    );
    expect(network.status).toBeUndefined();
    const timeout = toApiError(
      failure({ kind: "timeout", status: undefined, code: "UND_ERR_HEADERS_TIMEOUT", detail: "x" }),
      context,
    );
    expect(timeout.message).toMatch(/^createEndpoint: timed out \[UND_ERR_HEADERS_TIMEOUT\]/);
    const invalid = toApiError(
      failure({
        kind: "invalid_response",
        status: 201,
        code: "schema_mismatch",
        detail: "at endpoint.id: bad",
      }),
      context,
    );
    expect(invalid.message).toMatch(
      /^createEndpoint: invalid response to HTTP 201 \[schema_mismatch\]: at endpoint\.id: bad/,
    );
  });

  it("never carries the API key, wherever the server echoed it (property)", () => {
    const key = fc.stringMatching(/^[A-Za-z0-9_]{16,64}$/);
    const text = fc.string({ maxLength: 40 });
    fc.assert(
      fc.property(
        key,
        text,
        text,
        text,
        fc.constantFrom("http", "network", "timeout", "invalid_response" as const),
        (secret, a, b, c, kind) => {
          const error = toApiError(
            failure({
              kind,
              code: `${a}${secret}`,
              detail: `${b}Bearer ${secret}${c}${secret}`,
              serverRequestId: `${secret}${a}`,
            }),
            { ...context, secret },
          );
          expect(serialised(error)).not.toContain(secret);
        },
      ),
    );
  });
});
