/**
 * Secrets stay inside the sinks: the Slack webhook URL (a bearer credential), the webhook URL,
 * the signing secret and custom header values never appear in a `SendResult`, a thrown error or
 * anything written to the console, whatever the receiver answers (even when it echoes them).
 */
import { inspect } from "node:util";
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import type { SendResult, Sink } from "../../../src/alerts/sinks/sink.js";
import { createSlackSink, createWebhookSink } from "../../../src/alerts/sinks/index.js";
import { startReceiver, type Receiver, type ResponseScript } from "../../support/receiver.js";
import { makeAlert } from "./fixtures.js";

const SLACK_PATH = "/services/T000/B000/SECRET-TOKEN-123";
const HOOK_PATH = "/hooks/HOOK-PATH-SECRET?token=QUERY-SECRET-789";
const SIGNING_SECRET = "SIGNING-SECRET-456";
const HEADER_SECRET = "Bearer HEADER-SECRET-000";

const SECRETS = [
  "SECRET-TOKEN-123",
  "HOOK-PATH-SECRET",
  "QUERY-SECRET-789",
  SIGNING_SECRET,
  "HEADER-SECRET-000",
];

function expectNoSecret(text: string, receiver?: Receiver): void {
  for (const secret of SECRETS) expect(text.toUpperCase()).not.toContain(secret);
  if (receiver !== undefined) expect(text).not.toContain(receiver.url.replace("http://", ""));
}

/** Answers that echo the request's path (with its secrets) back in every way a server might. */
const echoing =
  (status: number): ResponseScript =>
  (request) => ({
    status,
    headers: { location: `http://127.0.0.1${request.path}`, "x-echo": request.path },
    body: `${request.path} invalid_token ${request.path.toLowerCase()}`,
  });

const SCRIPTS: [string, ResponseScript][] = [
  ["ok", { status: 200, body: "ok" }],
  ["200 echoing the path", echoing(200)],
  ["200 with a lower-case token", { status: 200, body: "secret_token_123" }],
  ["400 echoing the path", echoing(400)],
  ["301 to the same URL", echoing(301)],
  ["404", { status: 404, body: "no_service" }],
  ["429", { status: 429, headers: { "retry-after": "1" } }],
  ["500 echoing the path", echoing(500)],
  ["dropped connection", { drop: true }],
  ["slow reply", { delayMs: 2000 }],
  ["slow body", { status: 200, bodyDelayMs: 2000, body: "ok" }],
];

let receiver: Receiver;
let sinks: Sink[] = [];
let spies: MockInstance[] = [];

beforeEach(async () => {
  receiver = await startReceiver();
  spies = (["log", "info", "warn", "error", "debug", "trace"] as const).map((method) =>
    vi.spyOn(console, method).mockImplementation(() => undefined),
  );
});

afterEach(async () => {
  await Promise.all(sinks.map((s) => s.close()));
  sinks = [];
  await receiver.close();
  vi.restoreAllMocks();
});

function bothSinks(timeoutMs = 250): Sink[] {
  sinks = [
    createSlackSink({ name: "slack", webhookUrl: `${receiver.url}${SLACK_PATH}`, timeoutMs }),
    createWebhookSink({
      name: "hook",
      url: `${receiver.url}${HOOK_PATH}`,
      secret: SIGNING_SECRET,
      headers: { Authorization: HEADER_SECRET },
      timeoutMs,
    }),
  ];
  return sinks;
}

describe("secrets", () => {
  it("never appear in the webhook sink's results, whatever the receiver answers", async () => {
    const [, hook] = bothSinks();
    const results: SendResult[] = [];
    for (const [, script] of SCRIPTS) {
      receiver.setFallback(script);
      results.push(await hook!.send([makeAlert()], new AbortController().signal));
    }
    expect(results.filter((r) => !r.ok)).toHaveLength(SCRIPTS.length - 3);
    for (const result of results) expectNoSecret(JSON.stringify(result), receiver);
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });

  it.each(SCRIPTS)("never appear in the Slack sink's result for %s", async (_label, script) => {
    const [slack] = bothSinks();
    receiver.setFallback(script);
    const result = await slack!.send([makeAlert()], new AbortController().signal);
    expectNoSecret(JSON.stringify(result), receiver);
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });

  it("never appear for a refused connection, an abort or a closed sink", async () => {
    const all = bothSinks();
    await receiver.close();
    for (const sink of all) {
      expectNoSecret(JSON.stringify(await sink.send([makeAlert()], new AbortController().signal)));
      expectNoSecret(JSON.stringify(await sink.send([makeAlert()], AbortSignal.abort())));
      await sink.close();
      expectNoSecret(JSON.stringify(await sink.send([makeAlert()], new AbortController().signal)));
    }
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });

  it("are not visible on the sink objects", () => {
    for (const sink of bothSinks()) {
      expectNoSecret(JSON.stringify(sink));
      expectNoSecret(inspect(sink, { depth: 5, showHidden: true }));
    }
  });

  it("never appear in configuration errors", () => {
    const attempts: (() => unknown)[] = [
      () => createSlackSink({ name: "s", webhookUrl: `not a url ${SLACK_PATH}`, timeoutMs: 1000 }),
      () => createSlackSink({ name: "s", webhookUrl: `ftp://x${SLACK_PATH}`, timeoutMs: 1000 }),
      () =>
        createWebhookSink({
          name: "h",
          url: `https://user:${SIGNING_SECRET}@example.test${HOOK_PATH}`,
          timeoutMs: 1000,
        }),
      () =>
        createWebhookSink({
          name: "h",
          url: `https://example.test${HOOK_PATH}`,
          headers: { "X-Pgcp-Signature": HEADER_SECRET },
          timeoutMs: 1000,
        }),
      () =>
        createWebhookSink({
          name: "h",
          url: `https://example.test${HOOK_PATH}`,
          headers: { Authorization: `${HEADER_SECRET}\n` },
          timeoutMs: 1000,
        }),
      () =>
        createWebhookSink({
          name: "h",
          url: `https://example.test${HOOK_PATH}`,
          secret: SIGNING_SECRET,
          timeoutMs: -1,
        }),
    ];
    for (const attempt of attempts) {
      let thrown: unknown;
      try {
        attempt();
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(Error);
      expectNoSecret(inspect(thrown, { depth: 5, showHidden: true }));
      expectNoSecret(JSON.stringify(thrown));
    }
  });
});
