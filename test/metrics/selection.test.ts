import { afterEach, describe, expect, it } from "vitest";
import { CATALOGUE, createExporterMetrics } from "../../src/metrics/index.js";
import { closeAll, metricsFor, render } from "./support/rendering.js";
import { PROBES, feedEverything } from "./support/scenario.js";

afterEach(closeAll);

const familiesIn = (text: string) => [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!);

describe("include and exclude", () => {
  it("registers only the included families", async () => {
    const metrics = metricsFor({
      include: ["pgcp_operations_total", "pgcp_project_up", "process_cpu_seconds_total"],
      ...PROBES,
    });
    feedEverything(metrics);
    expect(familiesIn(await render(metrics))).toEqual([
      "pgcp_operations_total",
      "pgcp_project_up",
      "process_cpu_seconds_total",
    ]);
  });

  it("does not register excluded families, process metrics included", async () => {
    const metrics = metricsFor({
      exclude: ["pgcp_endpoint_info", "pgcp_api_requests_total", "nodejs_gc_duration_seconds"],
      ...PROBES,
    });
    feedEverything(metrics);
    const families = familiesIn(await render(metrics));
    expect(families).not.toContain("pgcp_endpoint_info");
    expect(families).not.toContain("pgcp_api_requests_total");
    expect(families).not.toContain("nodejs_gc_duration_seconds");
    expect(families).toContain("pgcp_endpoint_state");
    expect(families).toContain("pgcp_api_retries_total");
    expect(families).toContain("process_cpu_seconds_total");
  });

  it("applies exclude after include", async () => {
    const metrics = metricsFor({
      include: ["pgcp_operations_total", "pgcp_project_up"],
      exclude: ["pgcp_project_up"],
    });
    expect(familiesIn(await render(metrics))).toEqual(["pgcp_operations_total"]);
  });

  it("rejects names that name no family", () => {
    expect(() =>
      createExporterMetrics({
        version: "1",
        projects: [],
        exclude: ["pgcp_operation_total", "pgcp_project_up"],
      }),
    ).toThrow(/exclude names unknown metrics: pgcp_operation_total$/);
    expect(() => createExporterMetrics({ version: "1", projects: [], include: ["up"] })).toThrow(
      /include names unknown metrics: up$/,
    );
  });

  it("leaves the opt-in per-project histogram out unless it is configured, even when included", async () => {
    const name = "pgcp_project_operation_duration_seconds";
    expect(familiesIn(await render(metricsFor({ include: [name] })))).toEqual([]);
    expect(
      familiesIn(await render(metricsFor({ include: [name], perProjectHistograms: true }))),
    ).toEqual([name]);
  });

  it("registers every family of the catalogue but the opt-in one by default", async () => {
    const families = familiesIn(await render(metricsFor())).filter((f) => f.startsWith("pgcp_"));
    expect(families).toEqual(CATALOGUE.filter((s) => !("optIn" in s)).map((s) => s.name));
  });
});
