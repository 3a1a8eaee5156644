/**
 * The compute probe's families: what it read of each compute, the advice and its own health,
 * projected from the project views; a reading that goes (the endpoint idle) takes its series
 * with it, a deleted endpoint takes every series, and the failure counters count by reason.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ComputeView } from "../../src/sync/index.js";
import { endpoint } from "./support/fixtures.js";
import { closeAll, family, lines, metricsFor, render, samples } from "./support/rendering.js";

afterEach(closeAll);

const READ: ComputeView = {
  endpointId: "ep-1",
  state: "following",
  reading: {
    atMs: 1_700_000_060_000,
    startedAtMs: 1_700_000_000_000,
    hitRatio: 97.25,
    hits: 3890,
    misses: 110,
    used: 512,
    writes: 7,
    connections: 40,
  },
  up: true,
  lastSuccessMs: 1_700_000_060_000,
  failure: undefined,
  advised: ["file_cache"],
};

describe("compute metrics", () => {
  it("renders a reading, the advice by reason and the probe's health at standard", async () => {
    const metrics = metricsFor({ detail: "standard" });
    metrics.endpointsListed("p-1", [endpoint("p-1", "ep-1", { current_state: "active" })]);
    metrics.computeChanged("p-1", READ, { ok: true });
    const text = await render(metrics);
    expect(family(text, "pgcp_endpoint_file_cache_hit_ratio")).toEqual(
      lines(`
        # HELP pgcp_endpoint_file_cache_hit_ratio The compute's file cache hit ratio since it started, in percent (0 to 100), as its file cache view gives it (absent before the cache has been read from).
        # TYPE pgcp_endpoint_file_cache_hit_ratio gauge
        pgcp_endpoint_file_cache_hit_ratio{project="p-1",endpoint="ep-1"} 97.25
      `),
    );
    expect(samples(text, "pgcp_endpoint_connections")).toEqual(
      lines(`pgcp_endpoint_connections{project="p-1",endpoint="ep-1"} 40`),
    );
    expect(samples(text, "pgcp_endpoint_larger_compute_advised")).toEqual(
      lines(`
        pgcp_endpoint_larger_compute_advised{project="p-1",endpoint="ep-1",reason="connections"} 0
        pgcp_endpoint_larger_compute_advised{project="p-1",endpoint="ep-1",reason="file_cache"} 1
      `),
    );
    expect(samples(text, "pgcp_compute_probe_up")).toEqual(
      lines(`pgcp_compute_probe_up{project="p-1",endpoint="ep-1"} 1`),
    );
    expect(samples(text, "pgcp_compute_probes_total")).toEqual(
      lines(`
        pgcp_compute_probes_total{result="failure"} 0
        pgcp_compute_probes_total{result="success"} 1
      `),
    );
    // Every reason from the first compute on, so that a first failure is an increase.
    expect(samples(text, "pgcp_compute_probe_failures_total")).toHaveLength(11);
    // The view's counters are served at full only.
    expect(samples(text, "pgcp_endpoint_file_cache_hits_total")).toEqual([]);
  });

  it("renders the view's counters, the start and the probe's state at full", async () => {
    const metrics = metricsFor({ detail: "full" });
    metrics.endpointsListed("p-1", [endpoint("p-1", "ep-1", { current_state: "active" })]);
    metrics.computeChanged("p-1", READ, { ok: true });
    const text = await render(metrics);
    const one = (name: string) => samples(text, name);
    expect(one("pgcp_endpoint_file_cache_hits_total")).toEqual(
      lines(`pgcp_endpoint_file_cache_hits_total{project="p-1",endpoint="ep-1"} 3890`),
    );
    expect(one("pgcp_endpoint_file_cache_misses_total")).toEqual(
      lines(`pgcp_endpoint_file_cache_misses_total{project="p-1",endpoint="ep-1"} 110`),
    );
    expect(one("pgcp_endpoint_file_cache_used")).toEqual(
      lines(`pgcp_endpoint_file_cache_used{project="p-1",endpoint="ep-1"} 512`),
    );
    expect(one("pgcp_endpoint_compute_start_timestamp_seconds")).toEqual(
      lines(
        `pgcp_endpoint_compute_start_timestamp_seconds{project="p-1",endpoint="ep-1"} 1700000000`,
      ),
    );
    expect(one("pgcp_compute_probe_state")).toEqual(
      lines(`pgcp_compute_probe_state{project="p-1",endpoint="ep-1",state="following"} 1`),
    );
  });

  it("counts failures by reason, and keeps the last reading's series only while it belongs to the current start", async () => {
    const metrics = metricsFor({ detail: "standard" });
    metrics.endpointsListed("p-1", [endpoint("p-1", "ep-1", { current_state: "active" })]);
    metrics.computeChanged("p-1", READ, { ok: true });
    const failure = {
      reason: "timeout",
      message: "canceling statement",
      sinceMs: 1,
      count: 1,
    } as const;
    metrics.computeChanged(
      "p-1",
      { ...READ, state: "quiet", up: false, failure },
      {
        ok: false,
        reason: "timeout",
      },
    );
    let text = await render(metrics);
    expect(samples(text, "pgcp_compute_probe_up")).toEqual(
      lines(`pgcp_compute_probe_up{project="p-1",endpoint="ep-1"} 0`),
    );
    expect(samples(text, "pgcp_compute_probe_failures_total")).toContain(
      'pgcp_compute_probe_failures_total{reason="timeout"} 1',
    );
    // Idle: the reading and the advice go, the probe's health stays.
    metrics.computeChanged("p-1", { ...READ, state: "idle", reading: undefined, advised: [] });
    text = await render(metrics);
    expect(samples(text, "pgcp_endpoint_file_cache_hit_ratio")).toEqual([]);
    expect(samples(text, "pgcp_endpoint_larger_compute_advised")).toEqual([]);
    expect(samples(text, "pgcp_compute_probe_up")).toHaveLength(1);
    // Deleted: nothing of it stays.
    metrics.endpointsListed("p-1", []);
    text = await render(metrics);
    expect(samples(text, "pgcp_compute_probe_up")).toEqual([]);
  });

  it("forgets the computes of an account no longer probed", async () => {
    const metrics = metricsFor({ detail: "standard" });
    metrics.endpointsListed("p-1", [endpoint("p-1", "ep-1", { current_state: "active" })]);
    metrics.computeChanged("p-1", READ, { ok: true });
    metrics.computeForgotten("p-1", "ep-1");
    expect(samples(await render(metrics), "pgcp_compute_probe_up")).toEqual([]);
  });
});
