/**
 * Grafana's provisioning files (`config/grafana/provisioning`) fit the dashboards and the sample
 * Prometheus configuration: a Prometheus data source whose time interval is Prometheus' scrape
 * interval, a file provider for the dashboards, and the exporter's default port scraped.
 */
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config/index.js";
import { DASHBOARDS } from "../../tools/dashboards/index.js";
import { DASHBOARD_DIR } from "./support/dashboards.js";

const CONFIG = fileURLToPath(new URL("../../config/", import.meta.url));

function yaml(file: string): unknown {
  return parse(readFileSync(CONFIG + file, "utf8"));
}

const datasources = yaml("grafana/provisioning/datasources/prometheus.yml") as {
  apiVersion: number;
  datasources: {
    name: string;
    type: string;
    uid: string;
    url: string;
    jsonData: Record<string, unknown>;
  }[];
};
const providers = yaml("grafana/provisioning/dashboards/pgcp.yml") as {
  apiVersion: number;
  providers: { name: string; type: string; folder: string; options: { path: string } }[];
};
const prometheus = yaml("prometheus/prometheus.yml") as {
  global: { scrape_interval: string };
  scrape_configs: { static_configs: { targets: string[] }[] }[];
};

describe("config/grafana/provisioning", () => {
  it("provisions one Prometheus data source with Prometheus' scrape interval", () => {
    expect(datasources.apiVersion).toBe(1);
    expect(datasources.datasources).toHaveLength(1);
    const [source] = datasources.datasources;
    expect(source).toMatchObject({ type: "prometheus", access: "proxy", isDefault: true });
    expect(source!.jsonData.timeInterval).toBe(prometheus.global.scrape_interval);
  });

  it("provisions the dashboards from files, and the folder holds every generated one", () => {
    expect(providers.apiVersion).toBe(1);
    expect(providers.providers).toHaveLength(1);
    const [provider] = providers.providers;
    expect(provider).toMatchObject({ type: "file", folder: "pgcp-exporter" });
    expect(provider!.options.path).toMatch(/^\//);
    // What the provider loads: every *.json of dashboards/, which are the generated ones.
    const json = readdirSync(DASHBOARD_DIR).filter((f) => f.endsWith(".json"));
    expect(json.sort()).toEqual(DASHBOARDS.map((d) => d.file).sort());
  });

  it("the sample Prometheus scrapes the exporter's default listen port", () => {
    const defaults = resolveConfig("defaults", [{ api: { key: "k" }, projects: "all" }]);
    const port = defaults.listen.split(":").at(-1);
    expect(prometheus.scrape_configs[0]!.static_configs[0]!.targets).toEqual([
      `localhost:${port!}`,
    ]);
  });
});
