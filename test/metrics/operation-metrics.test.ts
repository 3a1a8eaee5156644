import { afterEach, describe, expect, it } from "vitest";
import { DURATION_BUCKETS_SECONDS } from "../../src/sync/totals.js";
import { T0_S, arrival, pollResult, projectState, trackedOperation } from "./support/fixtures.js";
import { closeAll, family, lines, metricsFor, render, samples } from "./support/rendering.js";

afterEach(closeAll);

describe("operation metrics", () => {
  it("renders end-state arrivals per project, action and status from the committed totals", async () => {
    const metrics = metricsFor();
    metrics.stateLoaded(
      "p-1",
      projectState("p-1", {
        arrivals: [
          arrival("start_compute", "finished", [1, 2]),
          arrival("start_compute", "failed", [3]),
        ],
      }),
    );
    metrics.stateLoaded(
      "p-2",
      projectState("p-2", { arrivals: [arrival("create_branch", "finished", [0.2])] }),
    );
    expect(family(await render(metrics), "pgcp_operations_total")).toEqual(
      lines(`
        # HELP pgcp_operations_total Arrivals of operations at an end status (finished, failed, error, cancelled, skipped); a retried operation that fails again arrives again.
        # TYPE pgcp_operations_total counter
        pgcp_operations_total{project="p-1",action="start_compute",status="finished"} 2
        pgcp_operations_total{project="p-1",action="start_compute",status="failed"} 1
        pgcp_operations_total{project="p-2",action="create_branch",status="finished"} 1
      `),
    );
  });

  it("restores counters from the loaded state and sets them from every commit", async () => {
    const metrics = metricsFor();
    metrics.projectsChanged(["p-1"]);
    metrics.stateLoaded(
      "p-1",
      projectState("p-1", {
        arrivals: [arrival("start_compute", "finished", [1, 1, 1])],
        retries: { start_compute: 4 },
      }),
    );
    let text = await render(metrics);
    expect(samples(text, "pgcp_operations_total")).toEqual([
      'pgcp_operations_total{project="p-1",action="start_compute",status="finished"} 3',
    ]);
    expect(samples(text, "pgcp_operation_retries_total")).toEqual([
      'pgcp_operation_retries_total{project="p-1",action="start_compute"} 4',
    ]);

    const next = projectState("p-1", {
      arrivals: [arrival("start_compute", "finished", [1, 1, 1, 1, 1])],
      retries: { start_compute: 6 },
    });
    metrics.committed("p-1", pollResult(next), 0.1);
    // Committing the same state again (a poll that found nothing) changes nothing.
    metrics.committed("p-1", pollResult(next), 0.1);
    text = await render(metrics);
    expect(samples(text, "pgcp_operations_total")).toEqual([
      'pgcp_operations_total{project="p-1",action="start_compute",status="finished"} 5',
    ]);
    expect(samples(text, "pgcp_operation_retries_total")).toEqual([
      'pgcp_operation_retries_total{project="p-1",action="start_compute"} 6',
    ]);
  });

  it("a restart renders exactly what was committed before it", async () => {
    const committed = projectState("p-1", {
      arrivals: [arrival("suspend_compute", "finished", [2, 40])],
      retries: { suspend_compute: 1 },
    });
    const before = metricsFor();
    before.projectsChanged(["p-1"]);
    before.committed("p-1", pollResult(committed), 0.1);
    const after = metricsFor();
    after.stateLoaded("p-1", committed);
    after.projectsChanged(["p-1"]);
    const [a, b] = [await render(before), await render(after)];
    for (const name of [
      "pgcp_operations_total",
      "pgcp_operation_retries_total",
      "pgcp_operation_duration_seconds",
    ]) {
      expect(family(b, name)).toEqual(family(a, name));
    }
  });

  it("sums the persisted duration buckets over projects", async () => {
    const metrics = metricsFor();
    metrics.stateLoaded(
      "p-1",
      projectState("p-1", { arrivals: [arrival("start_compute", "finished", [0.05, 4])] }),
    );
    metrics.stateLoaded(
      "p-2",
      projectState("p-2", { arrivals: [arrival("start_compute", "finished", [4, 7200])] }),
    );
    const series = (le: string, value: number) =>
      `pgcp_operation_duration_seconds_bucket{action="start_compute",status="finished",le="${le}"} ${value}`;
    expect(family(await render(metrics), "pgcp_operation_duration_seconds")).toEqual(
      lines(`
        # HELP pgcp_operation_duration_seconds Time from creation to end status of the operations counted in pgcp_operations_total, over all projects.
        # TYPE pgcp_operation_duration_seconds histogram
        ${series("0.1", 1)}
        ${series("0.25", 1)}
        ${series("0.5", 1)}
        ${series("1", 1)}
        ${series("2.5", 1)}
        ${series("5", 3)}
        ${series("10", 3)}
        ${series("30", 3)}
        ${series("60", 3)}
        ${series("120", 3)}
        ${series("300", 3)}
        ${series("600", 3)}
        ${series("1800", 3)}
        ${series("3600", 3)}
        ${series("+Inf", 4)}
        pgcp_operation_duration_seconds_sum{action="start_compute",status="finished"} 7208.05
        pgcp_operation_duration_seconds_count{action="start_compute",status="finished"} 4
      `),
    );
  });

  it("keeps counts and sums but not buckets of a state counted with other bounds", async () => {
    const metrics = metricsFor();
    const state = projectState("p-1", { arrivals: [arrival("start_compute", "finished", [1, 2])] });
    const foreign = {
      ...state,
      totals: {
        ...state.totals,
        durationBuckets: [1, 10],
        arrivals: [{ ...state.totals.arrivals[0]!, buckets: [1, 1, 0] }],
      },
    };
    metrics.stateLoaded("p-1", foreign);
    const rendered = samples(await render(metrics), "pgcp_operation_duration_seconds");
    expect(rendered).toContain(
      'pgcp_operation_duration_seconds_bucket{action="start_compute",status="finished",le="3600"} 0',
    );
    expect(rendered).toContain(
      'pgcp_operation_duration_seconds_bucket{action="start_compute",status="finished",le="+Inf"} 2',
    );
    expect(rendered).toContain(
      'pgcp_operation_duration_seconds_count{action="start_compute",status="finished"} 2',
    );
  });

  it("renders the per-project histogram only when configured", async () => {
    const state = projectState("p-1", { arrivals: [arrival("start_compute", "finished", [3])] });
    const plain = metricsFor();
    plain.stateLoaded("p-1", state);
    expect(family(await render(plain), "pgcp_project_operation_duration_seconds")).toEqual([]);

    const perProject = metricsFor({ perProjectHistograms: true });
    perProject.stateLoaded("p-1", state);
    const rendered = samples(await render(perProject), "pgcp_project_operation_duration_seconds");
    expect(rendered).toHaveLength(DURATION_BUCKETS_SECONDS.length + 3);
    expect(rendered).toContain(
      'pgcp_project_operation_duration_seconds_bucket{project="p-1",action="start_compute",status="finished",le="5"} 1',
    );
    expect(rendered).toContain(
      'pgcp_project_operation_duration_seconds_sum{project="p-1",action="start_compute",status="finished"} 3',
    );
  });

  it("renders open operations by status, leaving out failed ones watched for a retry", async () => {
    const metrics = metricsFor();
    metrics.stateLoaded(
      "p-1",
      projectState("p-1", {
        tracked: [
          trackedOperation("p-1", { action: "start_compute", status: "running" }),
          trackedOperation("p-1", { action: "start_compute", status: "running" }),
          trackedOperation("p-1", { action: "start_compute", status: "scheduling" }),
          trackedOperation("p-1", { action: "apply_config", status: "failed", failed: true }),
        ],
      }),
    );
    expect(family(await render(metrics), "pgcp_operations_open")).toEqual(
      lines(`
        # HELP pgcp_operations_open Operations followed that have not reached an end status, by current status (a series exists while at least one is open).
        # TYPE pgcp_operations_open gauge
        pgcp_operations_open{project="p-1",action="start_compute",status="running"} 2
        pgcp_operations_open{project="p-1",action="start_compute",status="scheduling"} 1
      `),
    );
  });

  it("renders stuck operations by action", async () => {
    const metrics = metricsFor();
    metrics.stateLoaded(
      "p-1",
      projectState("p-1", {
        tracked: [
          trackedOperation("p-1", { action: "start_compute", status: "running", stuck: true }),
          trackedOperation("p-1", { action: "start_compute", status: "scheduling", stuck: true }),
          trackedOperation("p-1", { action: "apply_config", status: "running" }),
        ],
      }),
    );
    expect(family(await render(metrics), "pgcp_operations_stuck")).toEqual(
      lines(`
        # HELP pgcp_operations_stuck Open operations older than their action's stuck threshold (a series exists while at least one is stuck).
        # TYPE pgcp_operations_stuck gauge
        pgcp_operations_stuck{project="p-1",action="start_compute"} 2
      `),
    );
  });

  it("renders retries by project and action", async () => {
    const metrics = metricsFor();
    metrics.stateLoaded(
      "p-1",
      projectState("p-1", { retries: { apply_config: 3, start_compute: 1 } }),
    );
    expect(family(await render(metrics), "pgcp_operation_retries_total")).toEqual(
      lines(`
        # HELP pgcp_operation_retries_total Retries of failed operations by the service: failures it moved on from (failures_count, less a failure the operation still sits in).
        # TYPE pgcp_operation_retries_total counter
        pgcp_operation_retries_total{project="p-1",action="apply_config"} 3
        pgcp_operation_retries_total{project="p-1",action="start_compute"} 1
      `),
    );
  });

  it("renders the newest operation's creation time from the watermark, once there is one", async () => {
    const metrics = metricsFor();
    metrics.stateLoaded("p-1", projectState("p-1", { watermarkSecond: T0_S - 90 }));
    metrics.stateLoaded("p-2", projectState("p-2", { watermarkSecond: 0 }));
    expect(
      family(await render(metrics), "pgcp_project_newest_operation_timestamp_seconds"),
    ).toEqual(
      lines(`
        # HELP pgcp_project_newest_operation_timestamp_seconds Creation time of the newest operation the committed checkpoint covers (absent until the project has an operation).
        # TYPE pgcp_project_newest_operation_timestamp_seconds gauge
        pgcp_project_newest_operation_timestamp_seconds{project="p-1"} ${T0_S - 90}
      `),
    );
  });

  it("drops every series of a project that is no longer watched", async () => {
    const metrics = metricsFor({ perProjectHistograms: true });
    const state = (id: string) =>
      projectState(id, {
        arrivals: [arrival("start_compute", "finished", [1])],
        retries: { start_compute: 1 },
        tracked: [
          trackedOperation(id, { action: "start_compute", status: "running", stuck: true }),
        ],
      });
    metrics.stateLoaded("p-1", state("p-1"));
    metrics.stateLoaded("p-2", state("p-2"));
    metrics.projectsChanged(["p-1", "p-2"]);
    expect(await render(metrics)).toContain('project="p-2"');

    metrics.projectsChanged(["p-1"]);
    // A poll of p-2 that was in flight when it was removed must not bring it back.
    metrics.committed("p-2", pollResult(state("p-2")), 0.1);
    const text = await render(metrics);
    expect(text).not.toContain('project="p-2"');
    expect(text).toContain('project="p-1"');
    expect(samples(text, "pgcp_operation_duration_seconds")).toContain(
      'pgcp_operation_duration_seconds_count{action="start_compute",status="finished"} 1',
    );
  });
});
