import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Sink } from "../../../src/alerts/sinks/sink.js";
import {
  createSlackSink,
  renderSlackMessage,
  SinkConfigError,
} from "../../../src/alerts/sinks/index.js";
import { PACKAGE } from "../../../src/version.js";
import { startReceiver, type Receiver } from "../../support/receiver.js";
import { alertsOfKind, makeAlert, makeIncidentAlert, mixedBatch } from "./fixtures.js";

const HOOK_PATH = "/services/T000/B000/SECRET-TOKEN-123";
const never = new AbortController().signal;

let receiver: Receiver;
const sinks: Sink[] = [];

beforeEach(async () => {
  receiver = await startReceiver();
});

afterEach(async () => {
  await Promise.all(sinks.splice(0).map((s) => s.close()));
  await receiver.close();
});

function slack(options: { timeoutMs?: number; maxBatch?: number } = {}): Sink {
  const sink = createSlackSink({
    name: "ops-slack",
    webhookUrl: `${receiver.url}${HOOK_PATH}`,
    timeoutMs: options.timeoutMs ?? 2000,
    maxBatch: options.maxBatch,
  });
  sinks.push(sink);
  return sink;
}

describe("Slack sink", () => {
  it("describes itself as the notifier expects", () => {
    const sink = slack();
    expect(sink).toMatchObject({
      name: "ops-slack",
      kind: "slack",
      maxBatch: 50,
      minIntervalMs: 1000,
    });
    expect(slack({ maxBatch: 20 }).maxBatch).toBe(20);
  });

  it("posts the rendered message and takes `ok` as delivered", async () => {
    const batch = mixedBatch();
    await expect(slack().send(batch, never)).resolves.toEqual({ ok: true });
    const [request] = receiver.requests;
    expect(request).toMatchObject({ method: "POST", path: HOOK_PATH });
    expect(request!.headers["content-type"]).toMatch(/^application\/json/);
    expect(request!.headers["user-agent"]).toBe(`pgcp-exporter/${PACKAGE.version}`);
    expect(request!.json).toEqual(JSON.parse(JSON.stringify(renderSlackMessage(batch))));
  });

  it("sends nothing for an empty batch", async () => {
    await expect(slack().send([], never)).resolves.toEqual({ ok: true });
    expect(receiver.requests).toHaveLength(0);
  });

  it("takes another 2xx body as a failure: Slack's error words are permanent", async () => {
    const sink = slack();
    receiver.respondWith({ status: 200, body: "no_text" }, { status: 200, body: "" });
    await expect(sink.send([makeAlert()], never)).resolves.toEqual({
      ok: false,
      reason: "client_error",
      permanent: true,
      detail: "HTTP 200 no_text",
    });
    await expect(sink.send([makeAlert()], never)).resolves.toEqual({
      ok: false,
      reason: "server_error",
      permanent: false,
      detail: "HTTP 200 unexpected reply",
    });
  });

  it("reports 429 as rate limited with Retry-After", async () => {
    receiver.respondWith({ status: 429, headers: { "retry-after": "2" }, body: "rate_limited" });
    await expect(slack().send([makeAlert()], never)).resolves.toEqual({
      ok: false,
      reason: "rate_limited",
      permanent: false,
      retryAfterMs: 2000,
      detail: "HTTP 429 rate_limited",
    });
  });

  it("reports 500 as a retryable server error", async () => {
    receiver.respondWith({ status: 500, body: "rollup_error" });
    await expect(slack().send([makeAlert()], never)).resolves.toEqual({
      ok: false,
      reason: "server_error",
      permanent: false,
      detail: "HTTP 500 rollup_error",
    });
  });

  it("reports 404 (a revoked webhook) as a permanent client error", async () => {
    receiver.respondWith({ status: 404, body: "no_service" });
    await expect(slack().send([makeAlert()], never)).resolves.toEqual({
      ok: false,
      reason: "client_error",
      permanent: true,
      detail: "HTTP 404 no_service",
    });
  });

  it("reports a dropped connection as a network failure", async () => {
    receiver.respondWith({ drop: true });
    await expect(slack().send([makeAlert()], never)).resolves.toEqual({
      ok: false,
      reason: "network",
      permanent: false,
      detail: "UND_ERR_SOCKET",
    });
  });

  it("reports a refused connection as a network failure", async () => {
    const sink = slack();
    await receiver.close();
    await expect(sink.send([makeAlert()], never)).resolves.toMatchObject({
      ok: false,
      reason: "network",
      permanent: false,
      detail: "ECONNREFUSED",
    });
  });

  it("reports a reply slower than the timeout as a timeout", async () => {
    receiver.respondWith({ delayMs: 3000, body: "ok" }, { bodyDelayMs: 3000, body: "ok" });
    const sink = slack({ timeoutMs: 200 });
    const started = Date.now();
    await expect(sink.send([makeAlert()], never)).resolves.toMatchObject({
      ok: false,
      reason: "timeout",
      permanent: false,
    });
    expect(Date.now() - started).toBeLessThan(1500);
    // Headers on time, body late.
    await expect(sink.send([makeAlert()], never)).resolves.toMatchObject({
      ok: false,
      reason: "timeout",
      permanent: false,
    });
  });

  it("stops when the caller aborts, without throwing", async () => {
    receiver.respondWith({ delayMs: 3000 });
    const controller = new AbortController();
    setTimeout(() => {
      controller.abort();
    }, 100);
    await expect(slack().send([makeAlert()], controller.signal)).resolves.toEqual({
      ok: false,
      reason: "timeout",
      permanent: false,
      detail: "aborted",
    });
    await expect(slack().send([makeAlert()], AbortSignal.abort())).resolves.toMatchObject({
      detail: "aborted",
    });
  });

  it("keeps at most one message per second per webhook, even if called faster", async () => {
    const sink = slack();
    const other = slack(); // the same webhook under another name
    const [a, b, c] = [makeAlert(), makeAlert(), makeAlert()];
    const results = await Promise.all([
      sink.send([a], never),
      sink.send([b], never),
      other.send([c], never),
    ]);
    expect(results).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
    const times = receiver.requests.map((r) => r.receivedAtMs).sort((a, b) => a - b);
    expect(times).toHaveLength(3);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(950);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(950);
    // One kept-alive connection carried both messages of `sink`.
    const portOf = (id: string): number | undefined =>
      receiver.requests.find((r) => r.text.includes(id))?.remotePort;
    expect(portOf(a.operationId)).toBeDefined();
    expect(portOf(a.operationId)).toBe(portOf(b.operationId));
    expect(portOf(c.operationId)).toBeDefined();
  });

  it("sends 20 items and `and N more` for a full batch", async () => {
    await expect(slack().send(alertsOfKind("operation_stuck", 50), never)).resolves.toEqual({
      ok: true,
    });
    const body = receiver.requests[0]!.json as { blocks: unknown[]; text: string };
    expect(body.blocks).toHaveLength(23);
    expect(body.text).toMatch(/and 30 more$/);
  });

  it("posts a platform incident's opening and resolution, and nothing for its updates", async () => {
    const sink = slack();
    const [opened, updated, resolved] = (["opened", "updated", "resolved"] as const).map((state) =>
      makeIncidentAlert(state, { projectCount: 25 }),
    );
    await expect(sink.send([opened!], never)).resolves.toEqual({ ok: true });
    await expect(sink.send([updated!], never)).resolves.toEqual({ ok: true });
    await expect(sink.send([resolved!], never)).resolves.toEqual({ ok: true });
    expect(receiver.requests.map((r) => r.json)).toEqual([
      JSON.parse(JSON.stringify(renderSlackMessage([opened!]))),
      JSON.parse(JSON.stringify(renderSlackMessage([resolved!]))),
    ]);
    // In a batch with other alerts, an update is left out of the message.
    const failed = makeAlert();
    await expect(sink.send([updated!, failed], never)).resolves.toEqual({ ok: true });
    expect(receiver.requests[2]!.json).toEqual(
      JSON.parse(JSON.stringify(renderSlackMessage([failed]))),
    );
  });

  it("refuses after close, and close is idempotent", async () => {
    const sink = slack();
    await sink.close();
    await sink.close();
    await expect(sink.send([makeAlert()], never)).resolves.toEqual({
      ok: false,
      reason: "network",
      permanent: false,
      detail: "sink closed",
    });
    expect(receiver.requests).toHaveLength(0);
  });

  it("checks its options", () => {
    const base = { name: "s", webhookUrl: "https://hooks.example.test/x", timeoutMs: 1000 };
    expect(() => createSlackSink({ ...base, webhookUrl: "not a url" })).toThrow(SinkConfigError);
    expect(() => createSlackSink({ ...base, webhookUrl: "ftp://hooks.example.test/x" })).toThrow(
      /must be an http or https URL/,
    );
    expect(() => createSlackSink({ ...base, timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => createSlackSink({ ...base, maxBatch: 1.5 })).toThrow(/maxBatch/);
    expect(() => createSlackSink({ ...base, name: " " })).toThrow(/name/);
  });
});
