/**
 * The PagerDuty sink over real HTTP, against the stand-in for PagerDuty's Events API v2
 * (test/support/pagerduty-receiver.ts), which validates each event as PagerDuty does and keeps
 * its alerts by dedup_key.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Sink } from "../../../src/alerts/sinks/sink.js";
import {
  classifyPagerDutyReply,
  createPagerDutySink,
  SinkConfigError,
  type PagerDutySinkOptions,
} from "../../../src/alerts/sinks/index.js";
import { defaultSink } from "../../../src/config/index.js";
import { PACKAGE } from "../../../src/version.js";
import {
  startPagerDutyReceiver,
  type PagerDutyReceiver,
} from "../../support/pagerduty-receiver.js";
import { makeAlert, makeIncidentAlert, mixedBatch } from "./fixtures.js";

const ROUTING_KEY = "PDR0UTINGKEYSECRET0123456789abcd";
const severities = defaultSink("pagerduty").severity;
const never = new AbortController().signal;

let pd: PagerDutyReceiver;
const sinks: Sink[] = [];

beforeEach(async () => {
  pd = await startPagerDutyReceiver();
});

afterEach(async () => {
  await Promise.all(sinks.splice(0).map((s) => s.close()));
  await pd.close();
});

function pagerduty(options: Partial<PagerDutySinkOptions> = {}): Sink {
  const sink = createPagerDutySink({
    name: "oncall",
    url: pd.url,
    routingKey: ROUTING_KEY,
    severities,
    timeoutMs: 2000,
    ...options,
  });
  sinks.push(sink);
  return sink;
}

describe("PagerDuty sink", () => {
  it("describes itself as the notifier expects: one alert per batch by default", () => {
    expect(pagerduty()).toMatchObject({
      name: "oncall",
      kind: "pagerduty",
      maxBatch: 1,
      minIntervalMs: 0,
    });
    expect(pagerduty({ maxBatch: 10 }).maxBatch).toBe(10);
  });

  it("sends one event per alert, in order, and PagerDuty opens and resolves by dedup_key", async () => {
    const batch = mixedBatch();
    await expect(pagerduty({ maxBatch: 10 }).send(batch, never)).resolves.toEqual({ ok: true });
    expect(pd.log.map((l) => [l.status, l.event?.event_action])).toEqual([
      [202, "trigger"],
      [202, "trigger"],
      [202, "trigger"],
      [202, "resolve"],
    ]);
    const [failed, stuck, retrying] = batch;
    expect(pd.incidents.map((i) => [i.dedupKey, i.status])).toEqual([
      [failed!.id, "resolved"],
      [stuck!.id, "triggered"],
      [retrying!.id, "triggered"],
    ]);
    const request = pd.log[0]!.request;
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["user-agent"]).toBe(`pgcp-exporter/${PACKAGE.version}`);
    expect(pd.log.every((l) => l.event?.routing_key === ROUTING_KEY)).toBe(true);
  });

  it("keeps a platform incident as one PagerDuty incident: opened, updated, then resolved", async () => {
    const sink = pagerduty();
    const [opened, updated, resolved] = (["opened", "updated", "resolved"] as const).map((state) =>
      makeIncidentAlert(state, { incidentId: "inc-b41c" }),
    );
    for (const alert of [opened!, updated!, resolved!]) {
      expect(await sink.send([alert], never)).toEqual({ ok: true });
    }
    expect(pd.log.map((l) => [l.status, l.event?.event_action, l.event?.dedup_key])).toEqual([
      [202, "trigger", "pgcp-incident-inc-b41c"],
      [202, "trigger", "pgcp-incident-inc-b41c"],
      [202, "resolve", "pgcp-incident-inc-b41c"],
    ]);
    // The update joined the open incident instead of opening (and paging) another.
    expect(pd.incidents).toHaveLength(1);
    expect(pd.incidents[0]).toMatchObject({ status: "resolved" });
    expect(pd.incidents[0]!.events.map((e) => e.event_action)).toEqual([
      "trigger",
      "trigger",
      "resolve",
    ]);
  });

  it("refuses for good on a 400, with PagerDuty's words and never the routing key", async () => {
    // PagerDuty's own validation: a routing key of the wrong length.
    const short = pagerduty({ routingKey: "SHORTKEY-not-32-characters" });
    const refused = await short.send([makeAlert()], never);
    expect(refused).toEqual({
      ok: false,
      reason: "client_error",
      permanent: true,
      detail:
        "HTTP 400 Event object is invalid (Length of 'routing_key' is incorrect (should be 32 characters))",
      deadLetterReason:
        "HTTP 400 Event object is invalid (Length of 'routing_key' is incorrect (should be 32 characters))",
    });
    // An answer that echoes the key, across lines: redacted, on one line.
    pd.respondNext({
      status: 400,
      json: {
        status: "invalid event",
        message: "Event object is invalid",
        errors: [`routing key ${ROUTING_KEY}\nis disabled`, "second"],
      },
    });
    const echoed = await pagerduty().send([makeAlert()], never);
    expect(echoed).toMatchObject({ ok: false, permanent: true });
    expect(JSON.stringify(echoed)).not.toContain(ROUTING_KEY);
    expect(echoed).toMatchObject({
      deadLetterReason:
        "HTTP 400 Event object is invalid (routing key [redacted] is disabled; second)",
    });
    expect(pd.incidents).toEqual([]);
  });

  it("retries a 429 after its Retry-After, a 5xx and a dropped connection", async () => {
    const sink = pagerduty();
    pd.respondNext(
      { status: 429, headers: { "retry-after": "7" } },
      { status: 503 },
      { drop: true },
    );
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await sink.send([makeAlert()], never));
    expect(results).toEqual([
      {
        ok: false,
        reason: "rate_limited",
        permanent: false,
        retryAfterMs: 7000,
        detail: "HTTP 429",
      },
      { ok: false, reason: "server_error", permanent: false, detail: "HTTP 503" },
      expect.objectContaining({ ok: false, reason: "network", permanent: false }),
    ]);
    expect(pd.incidents).toEqual([]);
  });

  it("does not send again what PagerDuty accepted when a batch is sent again", async () => {
    const sink = pagerduty({ maxBatch: 3 });
    const failed = makeAlert();
    const recovered = makeAlert({ kind: "operation_recovered", resolves: failed.id });
    const other = makeAlert();
    const batch = [failed, recovered, other];
    // The third event fails: the batch fails, and the notifier will send it again whole.
    pd.setScript((request) => (request.index === 2 ? { status: 500 } : undefined));
    expect(await sink.send(batch, never)).toMatchObject({ ok: false, reason: "server_error" });
    // The first two are not sent again: the trigger would open a new incident after its resolve.
    expect(await sink.send(batch, never)).toEqual({ ok: true });
    expect(pd.log.map((l) => [l.status, l.event?.dedup_key])).toEqual([
      [202, failed.id],
      [202, failed.id],
      [500, other.id],
      [202, other.id],
    ]);
    expect(pd.incidentsFor(failed.id).map((i) => i.status)).toEqual(["resolved"]);
    expect(pd.incidentsFor(other.id).map((i) => i.status)).toEqual(["triggered"]);
  });

  it("adds a trigger sent again to its open incident (an answer lost after PagerDuty took it)", async () => {
    const sink = pagerduty();
    const alert = makeAlert();
    pd.respondNext({ status: 500, ingest: true });
    expect(await sink.send([alert], never)).toMatchObject({ ok: false, reason: "server_error" });
    expect(await sink.send([alert], never)).toEqual({ ok: true });
    const incidents = pd.incidentsFor(alert.id);
    expect(incidents).toHaveLength(1);
    expect(incidents[0]!.events).toHaveLength(2);
  });

  it("refuses unusable options without repeating a secret", () => {
    const attempts: Partial<PagerDutySinkOptions>[] = [
      { routingKey: "" },
      { routingKey: "has blanks in it PDR0UTINGKEYSECRET" },
      { url: "ftp://events.example/v2/enqueue" },
      { url: `https://user:${ROUTING_KEY}@events.example/v2/enqueue` },
      { statusPageUrl: "not a url" },
    ];
    for (const options of attempts) {
      let error: unknown;
      try {
        pagerduty(options);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(SinkConfigError);
      expect((error as Error).message).not.toContain("PDR0UTINGKEYSECRET");
    }
  });

  it("reads PagerDuty's 400 body whatever it holds, on one line and bounded", () => {
    const reply = (body: string) =>
      classifyPagerDutyReply({ status: 400, headers: {}, body }, { nowMs: 0 });
    expect(reply("<html>bad gateway</html>")).toEqual({
      ok: false,
      reason: "client_error",
      permanent: true,
      detail: "HTTP 400",
      deadLetterReason: "HTTP 400",
    });
    expect(reply(JSON.stringify({ message: "Event object is invalid" }))).toMatchObject({
      deadLetterReason: "HTTP 400 Event object is invalid",
    });
    expect(reply(JSON.stringify({ errors: ["a\u0007b", 42, "c\r\nd"] }))).toMatchObject({
      deadLetterReason: "HTTP 400 (a b; c d)",
    });
    const long = reply(JSON.stringify({ message: "x".repeat(5000) }));
    expect(long).toMatchObject({ detail: expect.stringMatching(/^HTTP 400 x{499}…$/) as unknown });
    // Any other status is read as every receiver's.
    expect(reply("").ok).toBe(false);
    expect(classifyPagerDutyReply({ status: 202, headers: {}, body: "{}" }, { nowMs: 0 })).toEqual({
      ok: true,
    });
  });
});
