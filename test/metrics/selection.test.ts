import { afterEach, describe, expect, it } from "vitest";
import {
  CATALOGUE,
  createExporterMetrics,
  type DetailLevel,
  type ExporterMetricsOptions,
} from "../../src/metrics/index.js";
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

  /** Metrics made with these options, as the exporter makes them (default detail). */
  const made = (options: Partial<ExporterMetricsOptions>) => () =>
    createExporterMetrics({ version: "1", projects: [], ...options });

  it("rejects names that name no family", () => {
    expect(made({ exclude: ["pgcp_operation_total", "pgcp_project_up"] })).toThrow(
      /exclude names unknown metrics: pgcp_operation_total$/,
    );
    expect(made({ include: ["up"] })).toThrow(/include names unknown metrics: up$/);
  });

  it("leaves the opt-in per-project histogram out unless it is configured, even when included", async () => {
    const name = "pgcp_project_operation_duration_seconds";
    expect(familiesIn(await render(metricsFor({ include: [name] })))).toEqual([]);
    expect(
      familiesIn(await render(metricsFor({ include: [name], perProjectHistograms: true }))),
    ).toEqual([name]);
  });

  it("registers every family of the catalogue but the opt-in one at full detail", async () => {
    const families = familiesIn(await render(metricsFor())).filter((f) => f.startsWith("pgcp_"));
    expect(families).toEqual(CATALOGUE.filter((s) => !("optIn" in s)).map((s) => s.name));
  });

  it("rejects an included family the detail level leaves out", () => {
    expect(made({ include: ["pgcp_project_up", "pgcp_endpoint_state"] })).toThrow(
      /include names metrics that detail standard does not serve: pgcp_endpoint_state \(from full\)$/,
    );
  });
});

describe("detail", () => {
  const pgcpFamilies = async (detail?: DetailLevel) => {
    const metrics = createExporterMetrics({
      version: "1",
      projects: [],
      ...(detail === undefined ? {} : { detail }),
      ...PROBES,
    });
    const families = familiesIn(await render(metrics)).filter((f) => f.startsWith("pgcp_"));
    metrics.close();
    return families;
  };

  it("serves the standard level by default: no endpoint state set, no per-endpoint sizes", async () => {
    const families = await pgcpFamilies();
    expect(families).toEqual(await pgcpFamilies("standard"));
    expect(families).toContain("pgcp_endpoint_info");
    expect(families).toContain("pgcp_endpoint_current_state");
    expect(families).toContain("pgcp_project_endpoint_starts_total");
    expect(families).not.toContain("pgcp_endpoint_state");
    expect(families).not.toContain("pgcp_endpoint_autoscaling_min_compute_units");
    expect(families).not.toContain("pgcp_endpoint_starts_total");
  });

  it("serves at minimal no endpoint family, and what the alert rules read", async () => {
    const families = await pgcpFamilies("minimal");
    expect(
      families.filter(
        (f) => f.startsWith("pgcp_endpoint_") && f !== "pgcp_endpoint_listings_total",
      ),
    ).toEqual([]);
    for (const name of ["pgcp_operations_total", "pgcp_operations_stuck", "pgcp_project_up"]) {
      expect(families).toContain(name);
    }
    expect(families).toContain("pgcp_api_requests_total");
  });

  it("serves each level's families and those of the levels before it", async () => {
    const [minimal, standard, full] = [
      await pgcpFamilies("minimal"),
      await pgcpFamilies("standard"),
      await pgcpFamilies("full"),
    ];
    expect(standard).toEqual(expect.arrayContaining(minimal));
    expect(full).toEqual(expect.arrayContaining(standard));
    expect(minimal.length).toBeLessThan(standard.length);
    expect(standard.length).toBeLessThan(full.length);
  });
});
