/**
 * `families()`, what the OTLP push reads: the families `/metrics` serves, as numbers. Read at
 * the moment of a rendering, it has exactly the rendering's families, in its order, and the same
 * series and values, histograms' per-bucket counts included (prom-client's cumulative `_bucket`
 * values turned back into per-bucket counts).
 */
import { afterEach, expect, it } from "vitest";
import type { FamilyValues } from "../../src/metrics/index.js";
import { parseExposition, type Sample } from "../support/exposition.js";
import { arrival, pollResult, projectState, trackedOperation } from "./support/fixtures.js";
import { closeAll, metricsFor, render } from "./support/rendering.js";

afterEach(closeAll);

/** The families as the exposition's sample lines would give them. */
function asSamples(families: readonly FamilyValues[]): Sample[] {
  return families.flatMap((family): Sample[] => {
    if (family.type !== "histogram") {
      return family.samples.map((s) => ({ name: family.name, labels: s.labels, value: s.value }));
    }
    return family.series.flatMap((s) => {
      let cumulative = 0;
      const buckets = family.bounds.map((bound, i) => {
        cumulative += s.buckets[i] ?? 0;
        const labels = { ...s.labels, le: String(bound) };
        return { name: `${family.name}_bucket`, labels, value: cumulative };
      });
      return [
        ...buckets,
        { name: `${family.name}_bucket`, labels: { ...s.labels, le: "+Inf" }, value: s.count },
        { name: `${family.name}_sum`, labels: s.labels, value: s.sum },
        { name: `${family.name}_count`, labels: s.labels, value: s.count },
      ];
    });
  });
}

const ours = (s: { readonly name: string }) => s.name.startsWith("pgcp_");
const key = (s: Sample) => `${s.name}${JSON.stringify(Object.entries(s.labels).sort())}`;
const sorted = (samples: Sample[]) => samples.sort((a, b) => key(a).localeCompare(key(b)));

it("reads every series /metrics serves, with the same values, also prom-client's histograms", async () => {
  const metrics = metricsFor();
  const state = projectState("p-1", {
    arrivals: [
      arrival("start_compute", "finished", [0.3, 4, 4, 7000]),
      arrival("apply_config", "failed", [12]),
    ],
    tracked: [trackedOperation("p-1", { action: "start_compute", status: "running" })],
  });
  metrics.committed("p-1", pollResult(state), 0.1);
  metrics.projectsChanged(["p-1"]);
  const common = { route: "listOperations", method: "GET", attempt: 1, requestId: "r" } as const;
  for (const durationMs of [20, 70, 70, 900, 40_000]) {
    metrics.apiEvents.onResponse?.({ ...common, status: 200, durationMs });
  }
  const text = await render(metrics);
  const read = await metrics.families();

  const served = sorted(parseExposition(text).filter(ours));
  expect(sorted(asSamples(read.filter(ours)))).toEqual(served);
  // Both histograms kinds are among them: a projected one and one prom-client counts.
  const names = new Set(served.map((s) => s.name));
  expect(names).toContain("pgcp_operation_duration_seconds_bucket");
  expect(names).toContain("pgcp_api_request_duration_seconds_bucket");
  const api = read.find((f) => f.name === "pgcp_api_request_duration_seconds");
  expect(api?.type === "histogram" && api.series[0]?.buckets.reduce((a, b) => a + b)).toBe(4);
});

it("has exactly the families of the rendering, in its order, as the selection chooses them", async () => {
  const metrics = metricsFor({
    detail: "minimal",
    exclude: ["pgcp_build_info", "process_max_fds"],
  });
  metrics.projectsChanged(["p-1"]);
  const text = await render(metrics);
  const read = await metrics.families();
  const rendered = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => `${m[1]} ${m[2]}`);
  expect(read.map((f) => `${f.name} ${f.type}`)).toEqual(rendered);
  expect(rendered).not.toContain("pgcp_build_info gauge");
});
