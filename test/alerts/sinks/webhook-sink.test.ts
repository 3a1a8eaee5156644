import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Sink } from "../../../src/alerts/sinks/sink.js";
import {
  createWebhookSink,
  idempotencyKey,
  SinkConfigError,
  webhookPayloadSchema,
  type WebhookSinkOptions,
} from "../../../src/alerts/sinks/index.js";
import { PACKAGE } from "../../../src/version.js";
import { startReceiver, type Receiver, type ResponseSpec } from "../../support/receiver.js";
import { makeAlert, makeIncidentAlert, mixedBatch, PROJECT } from "./fixtures.js";
import { loadDocsExample, verifyAsDocumented } from "./signature-example.js";

const SECRET = "whsec-SIGNING-SECRET-456";
const never = new AbortController().signal;

let receiver: Receiver;
const sinks: Sink[] = [];

beforeEach(async () => {
  receiver = await startReceiver({ fallback: { status: 204 } });
});

afterEach(async () => {
  await Promise.all(sinks.splice(0).map((s) => s.close()));
  await receiver.close();
});

function webhook(options: Partial<WebhookSinkOptions> = {}): Sink {
  const sink = createWebhookSink({
    name: "ops-hook",
    url: `${receiver.url}/hooks/pgcp?token=HOOK-TOKEN-789`,
    secret: SECRET,
    timeoutMs: 2000,
    ...options,
  });
  sinks.push(sink);
  return sink;
}

describe("webhook sink", () => {
  it("describes itself as the notifier expects", () => {
    expect(webhook()).toMatchObject({
      name: "ops-hook",
      kind: "webhook",
      maxBatch: 100,
      minIntervalMs: 0,
    });
  });

  it("posts the versioned body with its headers and a signature that verifies as documented", async () => {
    const batch = mixedBatch();
    const before = Date.now();
    await expect(webhook().send(batch, never)).resolves.toEqual({ ok: true });
    const [request] = receiver.requests;
    expect(request).toMatchObject({ method: "POST", path: "/hooks/pgcp?token=HOOK-TOKEN-789" });
    const body = webhookPayloadSchema.parse(request!.json);
    expect(body.version).toBe(1);
    expect(body.group_key).toBe(PROJECT);
    expect(body.alerts.map((a) => a.id)).toEqual(batch.map((a) => a.id));
    expect(Date.parse(body.sent_at)).toBeGreaterThanOrEqual(before);

    const headers = request!.headers;
    expect(headers["content-type"]).toBe("application/json");
    expect(headers["user-agent"]).toBe(`pgcp-exporter/${PACKAGE.version}`);
    expect(headers["idempotency-key"]).toBe(idempotencyKey(batch));
    expect(headers["x-pgcp-timestamp"]).toBe(String(Math.floor(Date.parse(body.sent_at) / 1000)));
    expect(headers["x-pgcp-signature"]).toMatch(/^v1=[0-9a-f]{64}$/);

    const fromDocs = await loadDocsExample();
    expect(fromDocs(SECRET, headers, request!.rawBody)).toBe(true);
    expect(verifyAsDocumented(SECRET, headers, request!.rawBody)).toBe(true);
    expect(verifyAsDocumented("wrong", headers, request!.rawBody)).toBe(false);
  });

  it("posts each alert of a platform incident with the incident and its stable id", async () => {
    const sink = webhook();
    const alerts = (["opened", "updated", "resolved"] as const).map((state) =>
      makeIncidentAlert(state),
    );
    for (const alert of alerts)
      await expect(sink.send([alert], never)).resolves.toEqual({ ok: true });
    const sent = receiver.requests.map((r) => webhookPayloadSchema.parse(r.json).alerts[0]!);
    expect(sent.map((a) => [a.kind, a.incident?.state, a.incident?.incident_id])).toEqual([
      ["platform_incident", "opened", "inc-7f3a2b"],
      ["platform_incident", "updated", "inc-7f3a2b"],
      ["platform_incident", "resolved", "inc-7f3a2b"],
    ]);
    expect(new Set(receiver.requests.map((r) => r.headers["idempotency-key"])).size).toBe(3);
  });

  it("uses the injected clock for sent_at and the signed timestamp", async () => {
    const now = Date.UTC(2025, 5, 1, 12, 0, 0, 250);
    await webhook({ now: () => now }).send([makeAlert()], never);
    const [request] = receiver.requests;
    expect((request!.json as { sent_at: string }).sent_at).toBe("2025-06-01T12:00:00.250Z");
    expect(request!.headers["x-pgcp-timestamp"]).toBe(String(Math.floor(now / 1000)));
    expect(verifyAsDocumented(SECRET, request!.headers, request!.rawBody, now / 1000)).toBe(true);
  });

  it("sends no signature without a secret", async () => {
    await webhook({ secret: undefined }).send([makeAlert()], never);
    expect(receiver.requests[0]!.headers).not.toHaveProperty("x-pgcp-signature");
    expect(receiver.requests[0]!.headers).toHaveProperty("x-pgcp-timestamp");
  });

  it("keeps the Idempotency-Key across attempts and orders, and changes it for other alerts", async () => {
    const sink = webhook();
    const [a, b, c] = [makeAlert(), makeAlert(), makeAlert()];
    await sink.send([a, b, c], never);
    await sink.send([c, a, b], never);
    await sink.send([a, b], never);
    await sink.send([a, b, makeAlert()], never);
    const keys = receiver.requests.map((r) => r.headers["idempotency-key"]);
    expect(keys[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[0]);
    expect(keys[3]).not.toBe(keys[0]);
    expect(keys[3]).not.toBe(keys[2]);
  });

  it("sends custom headers", async () => {
    await webhook({
      headers: { Authorization: "Bearer HEADER-SECRET-000", "X-Team": "db-ops" },
    }).send([makeAlert()], never);
    expect(receiver.requests[0]!.headers).toMatchObject({
      authorization: "Bearer HEADER-SECRET-000",
      "x-team": "db-ops",
    });
  });

  it.each([
    "X-Pgcp-Signature",
    "x-pgcp-timestamp",
    "X-PGCP-Anything",
    "Idempotency-Key",
    "content-type",
    "User-Agent",
    "Host",
    "Content-Length",
    "Transfer-Encoding",
  ])("refuses a custom %s header", (name) => {
    expect(() => webhook({ headers: { [name]: "v1=forged" } })).toThrow(SinkConfigError);
    expect(() => webhook({ headers: { [name]: "v1=forged" } })).toThrow(/set by the sink/);
  });

  it("refuses malformed custom headers and an empty secret", () => {
    expect(() => webhook({ headers: { "Bad Name": "x" } })).toThrow(/name/);
    expect(() => webhook({ headers: { "X-Ok": "a\r\nX-Injected: 1" } })).toThrow(/value/);
    expect(() => webhook({ headers: { "X-A": "1", "x-a": "2" } })).toThrow(/twice/);
    expect(() => webhook({ secret: "" })).toThrow(/secret is empty/);
    expect(() => webhook({ url: "https://user:pw@example.test/hook" })).toThrow(/credentials/);
  });

  const cases: [string, ResponseSpec, object][] = [
    ["200", { status: 200, body: "anything at all" }, { ok: true }],
    ["202", { status: 202 }, { ok: true }],
    [
      "400",
      { status: 400 },
      { ok: false, reason: "client_error", permanent: true, detail: "HTTP 400" },
    ],
    [
      "401",
      { status: 401 },
      { ok: false, reason: "client_error", permanent: true, detail: "HTTP 401" },
    ],
    [
      "404",
      { status: 404 },
      { ok: false, reason: "client_error", permanent: true, detail: "HTTP 404" },
    ],
    [
      "409",
      { status: 409 },
      { ok: false, reason: "client_error", permanent: false, detail: "HTTP 409" },
    ],
    [
      "408",
      { status: 408 },
      { ok: false, reason: "timeout", permanent: false, detail: "HTTP 408" },
    ],
    [
      "302",
      { status: 302, headers: { location: "https://elsewhere.example.test/" } },
      { ok: false, reason: "client_error", permanent: true },
    ],
    [
      "429 with Retry-After",
      { status: 429, headers: { "retry-after": "3" } },
      {
        ok: false,
        reason: "rate_limited",
        permanent: false,
        retryAfterMs: 3000,
        detail: "HTTP 429",
      },
    ],
    [
      "500",
      { status: 500 },
      { ok: false, reason: "server_error", permanent: false, detail: "HTTP 500" },
    ],
    [
      "503 with Retry-After",
      { status: 503, headers: { "retry-after": "1" } },
      {
        ok: false,
        reason: "server_error",
        permanent: false,
        retryAfterMs: 1000,
        detail: "HTTP 503",
      },
    ],
    ["a dropped connection", { drop: true }, { ok: false, reason: "network", permanent: false }],
    [
      "a reply slower than the timeout",
      { delayMs: 3000 },
      { ok: false, reason: "timeout", permanent: false },
    ],
    [
      "a body slower than the timeout",
      { status: 200, body: "late", bodyDelayMs: 3000 },
      { ok: false, reason: "timeout", permanent: false },
    ],
  ];

  it.each(cases)("classifies %s", async (_label, response, expected) => {
    receiver.respondWith(response);
    const result = await webhook({ timeoutMs: 300 }).send([makeAlert()], never);
    expect(result).toEqual(expect.objectContaining(expected));
    if ("retryAfterMs" in expected) return;
    expect(result).not.toHaveProperty("retryAfterMs");
  });

  it("sends a batch larger than maxBatch whole (the notifier splits batches)", async () => {
    const alerts = Array.from({ length: 5 }, () => makeAlert());
    await expect(webhook({ maxBatch: 2 }).send(alerts, never)).resolves.toEqual({ ok: true });
    expect((receiver.requests[0]!.json as { alerts: unknown[] }).alerts).toHaveLength(5);
  });
});
