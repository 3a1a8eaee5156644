/**
 * `/metrics` bodies are written into the buffers of earlier renderings once nobody reads them.
 * Over real HTTP on loopback: a scraper that reads slowly must still receive the one rendering
 * it asked for, whole, while later renderings are built and served; and the buffers of
 * renderings whose responses are done are written again rather than new ones allocated.
 */
import { request, type IncomingMessage } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CachedExposition } from "../../src/metrics/rendering/exposition.js";
import { slicedRendering } from "../../src/metrics/rendering/sliced-rendering.js";
import { startServer, type RunningServer } from "../../src/server/http-server.js";

const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
/** Lines of about 45 bytes: 300,000 make a body of some 13 MiB, more than loopback buffers hold. */
const LINES = 300_000;

let version = 0;
function* lines(): Generator<string> {
  yield "# HELP test_value A value.";
  yield "# TYPE test_value gauge";
  for (let i = 0; i < LINES; i++) yield `test_value{series="s-${i}"} ${version}`;
}
const expected = (v: number) => {
  const saved = version;
  version = v;
  const text = `${[...lines()].join("\n")}\n`;
  version = saved;
  return text;
};

let exposition: CachedExposition;
let server: RunningServer;

beforeEach(async () => {
  version = 0;
  const rendering = slicedRendering([lines]);
  exposition = new CachedExposition(
    () => rendering.render(),
    CONTENT_TYPE,
    { gatherMs: 60_000, refreshMs: 60_000 },
    (error) => {
      throw error;
    },
    undefined,
    (body) => {
      rendering.recycle(body);
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

/** A scrape whose body is not read until `read()` is called. */
function slowScrape(url: string): Promise<{ read: () => Promise<string> }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/metrics`, (res: IncomingMessage) => {
      res.pause();
      resolve({
        read: () =>
          new Promise((done) => {
            const chunks: Buffer[] = [];
            res.on("data", (chunk: Buffer) => chunks.push(chunk));
            res.on("end", () => {
              done(Buffer.concat(chunks).toString("utf8"));
            });
            res.resume();
          }),
      });
    });
    req.on("error", reject);
    req.end();
  });
}

async function scrape(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`);
  return response.text();
}

describe("/metrics bodies written into earlier renderings' buffers", () => {
  it("sends a slow scraper the rendering it asked for, whole, while later ones are built", async () => {
    const slow = await slowScrape(server.url);
    for (version = 1; version <= 4; version++) {
      await exposition.refresh();
      expect(await scrape(server.url), `rendering ${version}`).toBe(expected(version));
    }
    const received = await slow.read();
    expect(received.length).toBe(expected(0).length);
    expect(received === expected(0)).toBe(true);
  });

  it("writes a new rendering into the buffer of one whose responses are done", async () => {
    const memory = new Set<ArrayBufferLike>();
    for (version = 1; version <= 4; version++) {
      await exposition.refresh();
      expect(await scrape(server.url)).toBe(expected(version));
      const lent = exposition.lend();
      memory.add(lent.rendering.body.buffer);
      lent.release();
    }
    // Four renderings, each scraped: two buffers used in turn.
    expect(memory.size).toBeLessThanOrEqual(2);
  });
});
