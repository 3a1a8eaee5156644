import { afterEach, describe, expect, it } from "vitest";
import { endpoint, pollResult, projectState } from "./support/fixtures.js";
import { closeAll, family, lines, metricsFor, render, samples } from "./support/rendering.js";

afterEach(closeAll);

describe("endpoint metrics", () => {
  it("renders an info series per endpoint, its sizes and auto-suspend delay as labels", async () => {
    const metrics = metricsFor({ detail: "standard" });
    metrics.endpointsListed("p-1", [
      endpoint("p-1", "ep-rw", { autoscaling_limit_min_cu: 2, autoscaling_limit_max_cu: 8 }),
      endpoint("p-1", "ep-ro", {
        type: "read_only",
        branch_id: "br-dev",
        autoscaling_limit_min_cu: 0.75,
        suspend_timeout_seconds: -1,
      }),
    ]);
    expect(family(await render(metrics), "pgcp_endpoint_info")).toEqual(
      lines(`
        # HELP pgcp_endpoint_info Properties of an endpoint, its autoscaling limits, max_connections (empty outside the size table) and auto-suspend delay (+Inf: never) included; always 1.
        # TYPE pgcp_endpoint_info gauge
        pgcp_endpoint_info{project="p-1",branch="br-main",endpoint="ep-rw",region_id="aws-eu-central-1",endpoint_type="read_write",host="ep-rw.eu-central-1.example.net",min_compute_units="2",max_compute_units="8",max_connections="901",auto_suspend_delay_seconds="300"} 1
        pgcp_endpoint_info{project="p-1",branch="br-dev",endpoint="ep-ro",region_id="aws-eu-central-1",endpoint_type="read_only",host="ep-ro.eu-central-1.example.net",min_compute_units="0.75",max_compute_units="1",max_connections="",auto_suspend_delay_seconds="+Inf"} 1
      `),
    );
  });

  it("renders the current state as one series per endpoint, whatever the state", async () => {
    const metrics = metricsFor({ detail: "standard" });
    metrics.endpointsListed("p-1", [
      endpoint("p-1", "ep-1", { current_state: "active" }),
      endpoint("p-1", "ep-2", { current_state: "hibernating" }),
    ]);
    const text = await render(metrics);
    expect(samples(text, "pgcp_endpoint_current_state")).toEqual(
      lines(`
        pgcp_endpoint_current_state{project="p-1",endpoint="ep-1",state="active"} 1
        pgcp_endpoint_current_state{project="p-1",endpoint="ep-2",state="hibernating"} 1
      `),
    );
    // The state set is for the full level only.
    expect(family(text, "pgcp_endpoint_state")).toEqual([]);
  });

  it("sums the listed endpoints' sizes per project", async () => {
    const metrics = metricsFor({ detail: "standard" });
    metrics.endpointsListed("p-1", [
      endpoint("p-1", "ep-1", { autoscaling_limit_min_cu: 2, autoscaling_limit_max_cu: 8 }),
      endpoint("p-1", "ep-2", { autoscaling_limit_min_cu: 0.25, autoscaling_limit_max_cu: 1 }),
    ]);
    metrics.endpointsListed("p-2", []);
    const text = await render(metrics);
    const sums = ["min", "max"].flatMap((bound) =>
      samples(text, `pgcp_project_autoscaling_${bound}_compute_units`),
    );
    expect(sums).toEqual([
      'pgcp_project_autoscaling_min_compute_units{project="p-1"} 2.25',
      'pgcp_project_autoscaling_min_compute_units{project="p-2"} 0',
      'pgcp_project_autoscaling_max_compute_units{project="p-1"} 9',
      'pgcp_project_autoscaling_max_compute_units{project="p-2"} 0',
    ]);
  });

  it("sums starts and suspends per project, those of deleted endpoints included", async () => {
    const metrics = metricsFor({ detail: "standard" });
    metrics.stateLoaded(
      "p-1",
      projectState("p-1", {
        endpointStarts: { "ep-1": 4, "ep-gone": 3 },
        endpointSuspends: { "ep-1": 2 },
      }),
    );
    metrics.endpointsListed("p-1", [endpoint("p-1", "ep-1")]);
    const text = await render(metrics);
    expect(samples(text, "pgcp_project_endpoint_starts_total")).toEqual([
      'pgcp_project_endpoint_starts_total{project="p-1"} 7',
    ]);
    expect(samples(text, "pgcp_project_endpoint_suspends_total")).toEqual([
      'pgcp_project_endpoint_suspends_total{project="p-1"} 2',
    ]);
    expect(family(text, "pgcp_endpoint_starts_total")).toEqual([]);
  });

  it("renders the state as a state set, with an unknown state as a series of its own", async () => {
    const metrics = metricsFor();
    metrics.endpointsListed("p-1", [
      endpoint("p-1", "ep-1", { current_state: "active" }),
      endpoint("p-1", "ep-2", { current_state: "hibernating" }),
    ]);
    expect(family(await render(metrics), "pgcp_endpoint_state")).toEqual(
      lines(`
        # HELP pgcp_endpoint_state Endpoint state as a state set: 1 for the current state, 0 for the others (init, active, idle); an unknown state gets a series of its own.
        # TYPE pgcp_endpoint_state gauge
        pgcp_endpoint_state{project="p-1",endpoint="ep-1",state="init"} 0
        pgcp_endpoint_state{project="p-1",endpoint="ep-1",state="active"} 1
        pgcp_endpoint_state{project="p-1",endpoint="ep-1",state="idle"} 0
        pgcp_endpoint_state{project="p-1",endpoint="ep-2",state="init"} 0
        pgcp_endpoint_state{project="p-1",endpoint="ep-2",state="active"} 0
        pgcp_endpoint_state{project="p-1",endpoint="ep-2",state="idle"} 0
        pgcp_endpoint_state{project="p-1",endpoint="ep-2",state="hibernating"} 1
      `),
    );
  });

  it("renders sizes, and max_connections from the minimum size when the size table has it", async () => {
    const metrics = metricsFor();
    metrics.endpointsListed("p-1", [
      endpoint("p-1", "ep-1", { autoscaling_limit_min_cu: 2, autoscaling_limit_max_cu: 8 }),
      endpoint("p-1", "ep-2", { autoscaling_limit_min_cu: 0.75, autoscaling_limit_max_cu: 1 }),
    ]);
    const text = await render(metrics);
    expect(family(text, "pgcp_endpoint_autoscaling_min_compute_units")).toEqual(
      lines(`
        # HELP pgcp_endpoint_autoscaling_min_compute_units Minimum autoscaling size in compute units (1 CU = 1 vCPU and 4 GB RAM).
        # TYPE pgcp_endpoint_autoscaling_min_compute_units gauge
        pgcp_endpoint_autoscaling_min_compute_units{project="p-1",endpoint="ep-1"} 2
        pgcp_endpoint_autoscaling_min_compute_units{project="p-1",endpoint="ep-2"} 0.75
      `),
    );
    expect(family(text, "pgcp_endpoint_autoscaling_max_compute_units")).toEqual(
      lines(`
        # HELP pgcp_endpoint_autoscaling_max_compute_units Maximum autoscaling size in compute units.
        # TYPE pgcp_endpoint_autoscaling_max_compute_units gauge
        pgcp_endpoint_autoscaling_max_compute_units{project="p-1",endpoint="ep-1"} 8
        pgcp_endpoint_autoscaling_max_compute_units{project="p-1",endpoint="ep-2"} 1
      `),
    );
    expect(family(text, "pgcp_endpoint_max_connections")).toEqual(
      lines(`
        # HELP pgcp_endpoint_max_connections Postgres max_connections that follows from the minimum size (absent for a size outside the size table); it does not grow when the compute scales up.
        # TYPE pgcp_endpoint_max_connections gauge
        pgcp_endpoint_max_connections{project="p-1",endpoint="ep-1"} 901
      `),
    );
  });

  it("renders the auto-suspend delay: the default for 0 or absent, +Inf with a 0 flag for never", async () => {
    const metrics = metricsFor();
    metrics.endpointsListed("p-1", [
      endpoint("p-1", "ep-default"),
      endpoint("p-1", "ep-zero", { suspend_timeout_seconds: 0 }),
      endpoint("p-1", "ep-hour", { suspend_timeout_seconds: 3600 }),
      endpoint("p-1", "ep-never", { suspend_timeout_seconds: -1 }),
    ]);
    const text = await render(metrics);
    expect(family(text, "pgcp_endpoint_auto_suspend_delay_seconds")).toEqual(
      lines(`
        # HELP pgcp_endpoint_auto_suspend_delay_seconds Idle time after which the endpoint is suspended (suspend_timeout_seconds, 0 meaning the default 300); +Inf when auto-suspend is off.
        # TYPE pgcp_endpoint_auto_suspend_delay_seconds gauge
        pgcp_endpoint_auto_suspend_delay_seconds{project="p-1",endpoint="ep-default"} 300
        pgcp_endpoint_auto_suspend_delay_seconds{project="p-1",endpoint="ep-zero"} 300
        pgcp_endpoint_auto_suspend_delay_seconds{project="p-1",endpoint="ep-hour"} 3600
        pgcp_endpoint_auto_suspend_delay_seconds{project="p-1",endpoint="ep-never"} +Inf
      `),
    );
    expect(family(text, "pgcp_endpoint_auto_suspend_enabled")).toEqual(
      lines(`
        # HELP pgcp_endpoint_auto_suspend_enabled 1 when the endpoint suspends itself when idle, 0 when auto-suspend is off (suspend_timeout_seconds -1).
        # TYPE pgcp_endpoint_auto_suspend_enabled gauge
        pgcp_endpoint_auto_suspend_enabled{project="p-1",endpoint="ep-default"} 1
        pgcp_endpoint_auto_suspend_enabled{project="p-1",endpoint="ep-zero"} 1
        pgcp_endpoint_auto_suspend_enabled{project="p-1",endpoint="ep-hour"} 1
        pgcp_endpoint_auto_suspend_enabled{project="p-1",endpoint="ep-never"} 0
      `),
    );
  });

  it("renders the last-active time when the API reports one", async () => {
    const metrics = metricsFor();
    metrics.endpointsListed("p-1", [
      endpoint("p-1", "ep-1", { last_active: "2026-01-01T11:59:30.500Z" }),
      endpoint("p-1", "ep-2"),
    ]);
    expect(family(await render(metrics), "pgcp_endpoint_last_active_timestamp_seconds")).toEqual(
      lines(`
        # HELP pgcp_endpoint_last_active_timestamp_seconds Last time the endpoint was active, as the API reports it (absent when it does not).
        # TYPE pgcp_endpoint_last_active_timestamp_seconds gauge
        pgcp_endpoint_last_active_timestamp_seconds{project="p-1",endpoint="ep-1"} ${Date.parse("2026-01-01T11:59:30.500Z") / 1000}
      `),
    );
  });

  it("renders starts and suspends from the totals: all before a listing, then the listed ones", async () => {
    const metrics = metricsFor();
    metrics.stateLoaded(
      "p-1",
      projectState("p-1", {
        endpointStarts: { "ep-1": 5, "ep-gone": 2 },
        endpointSuspends: { "ep-1": 4 },
      }),
    );
    let text = await render(metrics);
    expect(family(text, "pgcp_endpoint_starts_total")).toEqual(
      lines(`
        # HELP pgcp_endpoint_starts_total Finished start_compute operations of the endpoint; once the project's endpoints have been listed, only for listed endpoints.
        # TYPE pgcp_endpoint_starts_total counter
        pgcp_endpoint_starts_total{project="p-1",endpoint="ep-1"} 5
        pgcp_endpoint_starts_total{project="p-1",endpoint="ep-gone"} 2
      `),
    );
    expect(samples(text, "pgcp_endpoint_suspends_total")).toEqual([
      'pgcp_endpoint_suspends_total{project="p-1",endpoint="ep-1"} 4',
    ]);

    // ep-gone was deleted; ep-new never started yet and shows 0, so its first start is an increase.
    metrics.endpointsListed("p-1", [endpoint("p-1", "ep-1"), endpoint("p-1", "ep-new")]);
    text = await render(metrics);
    expect(samples(text, "pgcp_endpoint_starts_total")).toEqual(
      lines(`
        pgcp_endpoint_starts_total{project="p-1",endpoint="ep-1"} 5
        pgcp_endpoint_starts_total{project="p-1",endpoint="ep-new"} 0
      `),
    );
    expect(samples(text, "pgcp_endpoint_suspends_total")).toEqual(
      lines(`
        pgcp_endpoint_suspends_total{project="p-1",endpoint="ep-1"} 4
        pgcp_endpoint_suspends_total{project="p-1",endpoint="ep-new"} 0
      `),
    );

    metrics.committed(
      "p-1",
      pollResult(projectState("p-1", { endpointStarts: { "ep-1": 5, "ep-gone": 2, "ep-new": 1 } })),
      0.1,
    );
    expect(samples(await render(metrics), "pgcp_endpoint_starts_total")).toContain(
      'pgcp_endpoint_starts_total{project="p-1",endpoint="ep-new"} 1',
    );
  });

  it("drops every series of an endpoint missing from a later listing", async () => {
    const metrics = metricsFor();
    metrics.stateLoaded("p-1", projectState("p-1", { endpointStarts: { "ep-2": 1 } }));
    metrics.endpointsListed("p-1", [endpoint("p-1", "ep-1"), endpoint("p-1", "ep-2")]);
    expect(await render(metrics)).toContain('endpoint="ep-2"');
    metrics.endpointsListed("p-1", [endpoint("p-1", "ep-1")]);
    const text = await render(metrics);
    expect(text).not.toContain('endpoint="ep-2"');
    expect(samples(text, "pgcp_endpoint_info")).toHaveLength(1);
  });

  it("drops the endpoints of a project that is no longer watched", async () => {
    const metrics = metricsFor();
    metrics.projectsChanged(["p-1", "p-2"]);
    metrics.endpointsListed("p-1", [endpoint("p-1", "ep-1")]);
    metrics.endpointsListed("p-2", [endpoint("p-2", "ep-2")]);
    metrics.projectsChanged(["p-1"]);
    metrics.endpointsListed("p-2", [endpoint("p-2", "ep-2")]);
    const text = await render(metrics);
    expect(text).not.toContain('project="p-2"');
    expect(samples(text, "pgcp_endpoint_info")).toHaveLength(1);
  });
});
