import { describe, expect, it } from "vitest";
import { operationsPageSchema } from "../../src/contract/index.js";
import { interpretResponse } from "../../src/api/response.js";
import { WIRE_OPERATION } from "./support/wire-operation.js";

const NOW = Date.UTC(2025, 0, 1);
const op = WIRE_OPERATION;

const respond = (status: number, body: string, headers: Record<string, string> = {}) => ({
  status,
  headers,
  body: Buffer.from(body),
});

describe("interpretResponse", () => {
  it("accepts unknown fields, actions and statuses", () => {
    const body = {
      operations: [{ ...op, action: "tenant_attach", status: "paused_for_lunch", shiny: true }],
      pagination: { cursor: "2025-01-01T00:00:00.000000Z" },
      extra: 1,
    };
    const result = interpretResponse(respond(200, JSON.stringify(body)), operationsPageSchema, NOW);
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.value.operations[0]?.status).toBe("paused_for_lunch");
  });

  it("reports a body that is not JSON, or cut short", () => {
    for (const text of ["<html>oops</html>", '{"operations": [{"id": "x"', ""]) {
      const result = interpretResponse(respond(200, text), operationsPageSchema, NOW);
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.failure).toMatchObject({
          kind: "invalid_response",
          status: 200,
          code: "invalid_json",
        });
        expect(result.failure.detail).toMatch(
          /^body is not JSON: (empty body|.* bytes, not quoted\))$/,
        );
      }
    }
  });

  it("never quotes the body, which may echo a secret, in the reason", () => {
    // A proxy that answers with the request's own Authorization header.
    for (const text of [
      "Bearer sk_live_0123456789abcdef",
      '{"echo": "Bearer sk_live_0123456789',
      "<p>sk_live_0123456789abcdef</p>",
    ]) {
      const result = interpretResponse(respond(200, text), operationsPageSchema, NOW);
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.failure.code).toBe("invalid_json");
        expect(result.failure.detail).not.toMatch(/sk_live|Bearer|0123456/);
      }
    }
  });

  it("names the first schema issue by its path", () => {
    const body = { operations: [op, { ...op, created_at: "yesterday" }] };
    const result = interpretResponse(respond(200, JSON.stringify(body)), operationsPageSchema, NOW);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.failure.code).toBe("schema_mismatch");
      expect(result.failure.detail).toMatch(/^at operations\.1\.created_at: /);
    }
  });

  it("applies the extra consistency check", () => {
    const result = interpretResponse(
      respond(200, JSON.stringify({ operations: [] })),
      operationsPageSchema,
      NOW,
      () => "no good",
    );
    expect(result).toEqual({
      ok: false,
      failure: expect.objectContaining({
        code: "inconsistent_response",
        detail: "no good",
      }) as unknown,
    });
  });

  it("reads the error body, its request id and Retry-After", () => {
    const body = { code: "LOCKED", message: "project is locked", request_id: "req-9" };
    const result = interpretResponse(
      respond(423, JSON.stringify(body), { "retry-after": "2" }),
      operationsPageSchema,
      NOW,
    );
    expect(result).toEqual({
      ok: false,
      failure: {
        kind: "http",
        status: 423,
        code: "LOCKED",
        detail: "project is locked",
        serverRequestId: "req-9",
        retryAfterMs: 2000,
      },
    });
  });

  it("copes with an empty code and with a non-JSON error page", () => {
    const empty = interpretResponse(
      respond(500, JSON.stringify({ code: "", message: "" })),
      operationsPageSchema,
      NOW,
    );
    expect(!empty.ok && empty.failure).toMatchObject({ code: "", detail: "(no message)" });
    const html = interpretResponse(respond(502, "<h1>Bad gateway</h1>"), operationsPageSchema, NOW);
    expect(!html.ok && html.failure).toMatchObject({
      kind: "http",
      status: 502,
      code: "",
      detail: "(no error body)",
    });
  });
});
