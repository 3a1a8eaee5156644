/**
 * `/metrics` in gzip: over real HTTP on loopback, a scrape that asks for gzip gets the cached
 * rendering's gzip form, compressed once per rendering (the compressions are counted through
 * the compressor the exposition is given, the real one wrapped); others get the plain body.
 */
import { request } from "node:http";
import { gunzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gzipBody } from "../../src/metrics/rendering/compressed-body.js";
import { CachedExposition } from "../../src/metrics/rendering/exposition.js";
import { startServer, type RunningServer } from "../../src/server/http-server.js";

const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

/** One request with exactly these headers (no client adds Accept-Encoding of its own). */
function send(
  url: string,
  path: string,
  headers: Record<string, string> = {},
  method = "GET",
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

let version = 0;
/** A body of many series lines that changes with `version`. */
async function render(): Promise<string> {
  const lines = ["# HELP test_value A value.", "# TYPE test_value gauge"];
  for (let i = 0; i < 5000; i++) lines.push(`test_value{series="s-${i}"} ${version * 10_000 + i}`);
  return Promise.resolve(`${lines.join("\n")}\n`);
}

let exposition: CachedExposition;
let server: RunningServer;
let compressions: number;

beforeEach(async () => {
  compressions = 0;
  exposition = new CachedExposition(
    render,
    CONTENT_TYPE,
    { gatherMs: 250, refreshMs: 60_000 },
    (error) => {
      throw error;
    },
    (body) => {
      compressions += 1;
      return gzipBody(body);
    },
  );
  await exposition.refresh();
  server = await startServer({
    listen: "127.0.0.1:0",
    metrics: exposition,
    notReadyReason: () => undefined,
  });
});

afterEach(async () => {
  exposition.close();
  await server.close();
});

describe("/metrics in gzip", () => {
  it("serves the gzip form of the plain body to a scrape that asks for gzip", async () => {
    const plain = await send(server.url, "/metrics");
    const gzip = await send(server.url, "/metrics", { "accept-encoding": "gzip" });
    expect(gzip.status).toBe(200);
    expect(gzip.headers["content-encoding"]).toBe("gzip");
    expect(gzip.headers.vary).toBe("Accept-Encoding");
    expect(gzip.headers["content-type"]).toBe(CONTENT_TYPE);
    expect(Number(gzip.headers["content-length"])).toBe(gzip.body.length);
    expect(gzip.body.length).toBeLessThan(plain.body.length / 4);
    expect(gunzipSync(gzip.body).equals(plain.body)).toBe(true);
    expect(plain.body.toString()).toContain('test_value{series="s-4999"}');
  });

  it("compresses once per rendering, not per scrape", async () => {
    const before = compressions;
    const first = await send(server.url, "/metrics", { "accept-encoding": "gzip" });
    const second = await send(server.url, "/metrics", { "accept-encoding": "gzip, deflate" });
    expect(compressions).toBe(before);
    expect(second.body.equals(first.body)).toBe(true);

    version += 1;
    await exposition.refresh();
    expect(compressions).toBe(before + 1);
    const plain = await send(server.url, "/metrics");
    const third = await send(server.url, "/metrics", { "accept-encoding": "gzip" });
    expect(third.body.equals(first.body)).toBe(false);
    expect(gunzipSync(third.body).equals(plain.body)).toBe(true);
    expect(plain.body.toString()).toContain(`test_value{series="s-0"} ${version * 10_000}`);
  });

  it.each([
    ["no Accept-Encoding", {}],
    ["gzip;q=0", { "accept-encoding": "gzip;q=0" }],
    ["identity", { "accept-encoding": "identity" }],
    ["deflate only", { "accept-encoding": "deflate" }],
  ])("serves the plain body with %s", async (_name, headers) => {
    const answer = await send(server.url, "/metrics", headers);
    expect(answer.status).toBe(200);
    expect(answer.headers["content-encoding"]).toBeUndefined();
    expect(answer.headers.vary).toBe("Accept-Encoding");
    expect(Number(answer.headers["content-length"])).toBe(answer.body.length);
    expect(answer.body.equals(exposition.current().body)).toBe(true);
  });

  it("serves gzip to a scrape that accepts any coding (*)", async () => {
    const answer = await send(server.url, "/metrics", { "accept-encoding": "*" });
    expect(answer.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(answer.body).equals(exposition.current().body)).toBe(true);
  });

  it.each([
    ["gzip", { "accept-encoding": "gzip" }],
    ["plain", {}],
  ])("answers HEAD with the headers of GET (%s), without a body", async (_name, headers) => {
    const get = await send(server.url, "/metrics", headers);
    const head = await send(server.url, "/metrics", headers, "HEAD");
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    for (const name of ["content-type", "content-length", "content-encoding", "vary"]) {
      expect(head.headers[name], name).toBe(get.headers[name]);
    }
  });

  it("leaves the health endpoints as they were", async () => {
    for (const path of ["/healthz", "/readyz"]) {
      const answer = await send(server.url, path, { "accept-encoding": "gzip" });
      expect(answer.status).toBe(200);
      expect(answer.headers["content-encoding"]).toBeUndefined();
      expect(answer.body.toString()).toBe("OK\n");
    }
  });
});
