/**
 * A per-project family's lines are kept between renderings while the project's view is
 * unchanged in what the family reads: what a scrape shows must still be, after any sequence
 * of polls, listings, failures and changes of the watched list, exactly what a rendering made
 * from nothing shows for the same reports.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import type { ExporterMetrics } from "../../src/metrics/index.js";
import {
  arrival,
  endpoint,
  pollResult,
  projectState,
  trackedOperation,
} from "./support/fixtures.js";
import { closeAll, metricsFor, render, samples } from "./support/rendering.js";

afterEach(closeAll);

const PROJECTS = ["p-0", "p-1", "p-2", "p-3"];

type Report =
  | { kind: "list"; project: string; endpoints: { id: string; active: boolean; cu: number }[] }
  | { kind: "commit"; project: string; failed: number; starts: number; open: boolean; at: number }
  | { kind: "fail"; project: string }
  | { kind: "watch"; projects: string[] }
  | { kind: "render" };

const project = fc.constantFrom(...PROJECTS);
const report: fc.Arbitrary<Report> = fc.oneof(
  fc.record({
    kind: fc.constant("list" as const),
    project,
    endpoints: fc.uniqueArray(
      fc.record({
        id: fc.constantFrom("ep-a", "ep-b", "ep-c"),
        active: fc.boolean(),
        cu: fc.constantFrom(0.25, 1, 2),
      }),
      { selector: (e) => e.id, maxLength: 3 },
    ),
  }),
  fc.record({
    kind: fc.constant("commit" as const),
    project,
    failed: fc.nat(3),
    starts: fc.nat(3),
    open: fc.boolean(),
    at: fc.nat(1000),
  }),
  fc.record({ kind: fc.constant("fail" as const), project }),
  fc.record({
    kind: fc.constant("watch" as const),
    projects: fc.uniqueArray(project, { minLength: 1 }),
  }),
  fc.constant({ kind: "render" as const }),
);

function give(metrics: ExporterMetrics, r: Exclude<Report, { kind: "render" }>): void {
  switch (r.kind) {
    case "list":
      metrics.endpointsListed(
        r.project,
        r.endpoints.map((e) =>
          endpoint(r.project, e.id, {
            current_state: e.active ? "active" : "idle",
            autoscaling_limit_min_cu: e.cu,
            autoscaling_limit_max_cu: 2,
          }),
        ),
      );
      return;
    case "commit": {
      const state = projectState(r.project, {
        arrivals: [
          arrival("start_compute", "finished", [1, 2]),
          ...(r.failed > 0 ? [arrival("apply_config", "failed", Array(r.failed).fill(5))] : []),
        ],
        endpointStarts: r.starts > 0 ? { "ep-a": r.starts } : {},
        tracked: r.open
          ? [trackedOperation(r.project, { action: "suspend_compute", status: "running" })]
          : [],
        committedAtMs: 1_767_268_800_000 + r.at * 1000,
      });
      metrics.committed(r.project, pollResult(state), 0.1);
      return;
    }
    case "fail":
      metrics.pollFailed(r.project, new Error("503 from the API"), 0.1);
      return;
    case "watch":
      metrics.projectsChanged(r.projects);
  }
}

/** The series of the families projected from the projects' views (the ones kept per project). */
function projected(text: string): string[] {
  return text
    .split("\n")
    .filter((line) => /^pgcp_(project|endpoint|operation)/.test(line))
    .filter((line) => !line.startsWith("pgcp_operation_duration_seconds"));
}

describe("per-project text kept between renderings", () => {
  it("renders after any sequence of reports what a fresh rendering of them renders", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(report, { maxLength: 40 }), async (reports) => {
        const kept = metricsFor();
        for (const r of reports) {
          if (r.kind === "render") await render(kept);
          else give(kept, r);
        }
        const fresh = metricsFor();
        for (const r of reports) if (r.kind !== "render") give(fresh, r);
        expect(projected(await render(kept))).toEqual(projected(await render(fresh)));
        closeAll();
      }),
      { numRuns: 60 },
    );
  });

  it("shows a changed project's new lines beside the others' unchanged ones, and drops a project no longer watched", async () => {
    const metrics = metricsFor({ detail: "standard" });
    metrics.projectsChanged(["p-1", "p-2"]);
    metrics.endpointsListed("p-1", [endpoint("p-1", "ep-1", { current_state: "idle" })]);
    metrics.endpointsListed("p-2", [endpoint("p-2", "ep-2", { current_state: "idle" })]);
    const before = await render(metrics);
    expect(samples(before, "pgcp_endpoint_current_state")).toEqual([
      'pgcp_endpoint_current_state{project="p-1",endpoint="ep-1",state="idle"} 1',
      'pgcp_endpoint_current_state{project="p-2",endpoint="ep-2",state="idle"} 1',
    ]);

    metrics.endpointsListed("p-2", [endpoint("p-2", "ep-2", { current_state: "active" })]);
    expect(samples(await render(metrics), "pgcp_endpoint_current_state")).toEqual([
      'pgcp_endpoint_current_state{project="p-1",endpoint="ep-1",state="idle"} 1',
      'pgcp_endpoint_current_state{project="p-2",endpoint="ep-2",state="active"} 1',
    ]);

    metrics.projectsChanged(["p-2"]);
    const after = await render(metrics);
    expect(after).not.toContain('project="p-1"');
    expect(samples(after, "pgcp_endpoint_current_state")).toEqual([
      'pgcp_endpoint_current_state{project="p-2",endpoint="ep-2",state="active"} 1',
    ]);
  });
});
