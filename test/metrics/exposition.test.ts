import { gunzipSync, gzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CachedExposition } from "../../src/metrics/rendering/exposition.js";
import { pollResult, projectState } from "./support/fixtures.js";
import { closeAll, metricsFor } from "./support/rendering.js";

const TIMING = { gatherMs: 250, refreshMs: 5000 };
const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** A render function that returns `render #n` and counts its calls. */
function counter() {
  const state = { calls: 0 };
  const render = () => {
    state.calls += 1;
    return Promise.resolve(`render #${state.calls}\n`);
  };
  return { state, render };
}

/**
 * zlib's gzip, answered in the same turn: the timing tests below fake the timers and step
 * through the renderings, which a compression on the thread pool would not follow.
 */
const compressNow = (plain: Buffer) => Promise.resolve(gzipSync(plain));

const body = (exposition: CachedExposition) => exposition.current().body.toString();

describe("the cached exposition", () => {
  let exposition: CachedExposition | undefined;

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
  });
  afterEach(() => {
    exposition?.close();
    vi.useRealTimers();
  });

  it("renders once at construction, and publishes the rendering with its gzip form", async () => {
    const { state, render } = counter();
    exposition = new CachedExposition(render, CONTENT_TYPE, TIMING, () => undefined);
    expect(exposition.current().body.length).toBe(0);
    expect(gunzipSync(exposition.current().gzip).length).toBe(0);
    await vi.waitFor(() => {
      expect(body(exposition!)).toBe("render #1\n");
    });
    expect(gunzipSync(exposition.current().gzip).toString()).toBe("render #1\n");
    expect(exposition.current().contentType).toBe(CONTENT_TYPE);
    expect(state.calls).toBe(1);
  });

  it("keeps the last rendering, both forms, and reports the error when compressing fails", async () => {
    const errors: unknown[] = [];
    let fail = false;
    const { render } = counter();
    exposition = new CachedExposition(
      render,
      CONTENT_TYPE,
      TIMING,
      (e) => errors.push(e),
      (plain) => (fail ? Promise.reject(new Error("no zlib")) : Promise.resolve(gzipSync(plain))),
    );
    await exposition.refresh();
    fail = true;
    await exposition.refresh();
    expect(body(exposition)).toBe("render #2\n");
    expect(gunzipSync(exposition.current().gzip).toString()).toBe("render #2\n");
    expect(errors).toEqual([new Error("no zlib")]);
  });

  it("serves scrapes from the cache without rendering", async () => {
    const { state, render } = counter();
    exposition = new CachedExposition(render, CONTENT_TYPE, TIMING, () => undefined, compressNow);
    await exposition.refresh();
    for (let i = 0; i < 100; i++) exposition.current();
    expect(state.calls).toBe(2);
  });

  it("gathers a burst of changes into one rebuild", async () => {
    const { state, render } = counter();
    exposition = new CachedExposition(render, CONTENT_TYPE, TIMING, () => undefined, compressNow);
    await vi.advanceTimersByTimeAsync(0);
    for (let i = 0; i < 50; i++) exposition.invalidate();
    await vi.advanceTimersByTimeAsync(249);
    expect(state.calls).toBe(1);
    for (let i = 0; i < 50; i++) exposition.invalidate();
    await vi.advanceTimersByTimeAsync(1);
    expect(state.calls).toBe(2);
    expect(body(exposition)).toBe("render #2\n");
    await vi.advanceTimersByTimeAsync(1000);
    expect(state.calls).toBe(2);
  });

  it("rebuilds on the refresh timer with no change, for values read at render time", async () => {
    const { state, render } = counter();
    exposition = new CachedExposition(render, CONTENT_TYPE, TIMING, () => undefined, compressNow);
    await vi.advanceTimersByTimeAsync(4999);
    expect(state.calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(state.calls).toBe(2);
    await vi.advanceTimersByTimeAsync(5000);
    expect(state.calls).toBe(3);
  });

  it("waits longer after a slow rendering, so that rendering stays a small share of the time", async () => {
    let slow = false;
    const render = () => {
      // Real time passes (the clock that measures renderings is not faked).
      const until = performance.now() + (slow ? 60 : 0);
      while (performance.now() < until);
      return Promise.resolve("x\n");
    };
    const spy = vi.fn(render);
    exposition = new CachedExposition(spy, CONTENT_TYPE, TIMING, () => undefined, compressNow);
    slow = true;
    await exposition.refresh();
    spy.mockClear();
    exposition.invalidate();
    await vi.advanceTimersByTimeAsync(500);
    expect(spy).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(5000);
    expect(spy).toHaveBeenCalled();
  });

  it("keeps the last rendering and reports the error when a rendering fails", async () => {
    const errors: unknown[] = [];
    let fail = false;
    const render = () => (fail ? Promise.reject(new Error("boom")) : Promise.resolve("good\n"));
    exposition = new CachedExposition(
      render,
      CONTENT_TYPE,
      TIMING,
      (e) => errors.push(e),
      compressNow,
    );
    await exposition.refresh();
    fail = true;
    await exposition.refresh();
    expect(body(exposition)).toBe("good\n");
    expect(errors).toEqual([new Error("boom")]);
  });

  it("renders again after a rendering in progress when asked during it", async () => {
    let value = 1;
    let release: () => void = () => undefined;
    const render = async () => {
      const seen = value;
      await new Promise<void>((resolve) => (release = resolve));
      return `value ${seen}\n`;
    };
    exposition = new CachedExposition(render, CONTENT_TYPE, TIMING, () => undefined, compressNow);
    await vi.advanceTimersByTimeAsync(0); // the first rendering has read value 1 and waits
    value = 2;
    const second = exposition.refresh();
    release();
    await vi.advanceTimersByTimeAsync(0);
    expect(body(exposition)).toBe("value 1\n");
    release();
    await second;
    expect(body(exposition)).toBe("value 2\n");
  });

  it("stops its timers on close and keeps serving the last rendering", async () => {
    const { state, render } = counter();
    exposition = new CachedExposition(render, CONTENT_TYPE, TIMING, () => undefined, compressNow);
    await vi.advanceTimersByTimeAsync(0);
    exposition.invalidate();
    exposition.close();
    exposition.invalidate();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(state.calls).toBe(1);
    expect(body(exposition)).toBe("render #1\n");
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("the exporter's exposition", () => {
  afterEach(closeAll);

  it("shows a change after the gathering delay, without an explicit refresh", async () => {
    const metrics = metricsFor({ timing: { gatherMs: 20, refreshMs: 60_000 } });
    await metrics.refresh();
    metrics.projectsChanged(["p-1"]);
    metrics.committed("p-1", pollResult(projectState("p-1")), 0.1);
    expect(metrics.current().body.toString()).not.toContain('pgcp_project_up{project="p-1"} 1');
    await vi.waitFor(() => {
      expect(metrics.current().body.toString()).toContain('pgcp_project_up{project="p-1"} 1');
    });
  });

  it("keeps serving the last rendering and reports the error when a probe throws", async () => {
    const errors: unknown[] = [];
    let broken = false;
    const metrics = metricsFor({
      accounts: () => {
        if (broken) throw new Error("limiter gone");
        return [
          {
            name: "default",
            scheduler: { budget: { stretch: 1 }, tierIntervalSeconds: () => 30 },
            keyRefusal: () => undefined,
            projectBackoffs: () => new Map(),
            client: { limiterStats: () => ({ tokensRemaining: 5 }) },
            projects: () => [],
          },
        ];
      },
      onError: (error) => errors.push(error),
    });
    await metrics.refresh();
    broken = true;
    await metrics.refresh();
    expect(errors).toEqual([new Error("limiter gone")]);
    expect(metrics.current().body.toString()).toContain(
      'pgcp_api_rate_limit_tokens{account="default"} 5',
    );
  });
});
