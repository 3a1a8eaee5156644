import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { startReceiver, type Receiver } from "../../support/receiver.js";

let receiver: Receiver | undefined;

afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const response = await request(url, { method: "POST", body, headers });
  return {
    status: response.statusCode,
    headers: response.headers,
    text: await response.body.text(),
  };
}

describe("test receiver", () => {
  it("records requests and answers from its queue, then the fallback", async () => {
    receiver = await startReceiver();
    receiver.respondWith(
      { status: 500 },
      { status: 429, headers: { "Retry-After": "2" } },
      { json: { accepted: true } },
      (req) => ({ status: 201, body: `you sent ${req.text}` }),
    );
    expect(receiver.pending()).toBe(4);
    const answers = [];
    for (let i = 0; i < 5; i += 1) {
      answers.push(
        await post(`${receiver.url}/hook?x=${i}`, JSON.stringify({ i }), { "x-test": "t" }),
      );
    }
    expect(answers.map((a) => a.status)).toEqual([500, 429, 200, 201, 200]);
    expect(answers[1]!.headers["retry-after"]).toBe("2");
    expect(JSON.parse(answers[2]!.text)).toEqual({ accepted: true });
    expect(answers[3]!.text).toBe('you sent {"i":3}');
    expect(answers[4]!.text).toBe("ok");
    expect(receiver.requests).toHaveLength(5);
    expect(receiver.requests[2]).toMatchObject({
      index: 2,
      method: "POST",
      path: "/hook?x=2",
      text: '{"i":2}',
      json: { i: 2 },
    });
    expect(receiver.requests[2]!.headers["x-test"]).toBe("t");
    expect(receiver.requests[2]!.rawBody.equals(Buffer.from('{"i":2}'))).toBe(true);
    expect(receiver.requests[2]!.receivedAtMs).toBeGreaterThan(0);
  });

  it("waits for a condition and says how many requests came when it times out", async () => {
    receiver = await startReceiver({ fallback: { status: 204 } });
    const waiting = receiver.waitFor((requests) => requests.length >= 2, 2000);
    await post(receiver.url, "not json");
    await post(receiver.url, "");
    const requests = await waiting;
    expect(requests.map((r) => r.json)).toEqual([undefined, undefined]);
    await expect(receiver.waitFor((r) => r.length >= 3, 50)).rejects.toThrow(/2 requests received/);
    receiver.clear();
    expect(receiver.requests).toHaveLength(0);
  });

  it("drops connections, delays answers and closes with answers still pending", async () => {
    receiver = await startReceiver();
    receiver.respondWith({ drop: true }, { delayMs: 150, body: "late" }, { delayMs: 60_000 });
    await expect(post(receiver.url, "a")).rejects.toMatchObject({ code: "UND_ERR_SOCKET" });
    const started = Date.now();
    expect((await post(receiver.url, "b")).text).toBe("late");
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    const hanging = post(receiver.url, "c");
    await receiver.waitFor((r) => r.length === 3);
    await receiver.close();
    await expect(hanging).rejects.toBeDefined();
  });
});
