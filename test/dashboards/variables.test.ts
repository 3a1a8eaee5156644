/**
 * What the dashboards' variables show and send, by the rules Grafana applies to them (modelled in
 * `support/variables.ts`, checked here against Grafana's documented example): the organisation
 * and project dropdowns show names beside ids, the id while the name is unknown, and the queries
 * get the ids. Their answers from a real Prometheus: `queries.e2e.test.ts`.
 */
import { describe, expect, it } from "vitest";
import { generatedDashboards, queryVariables } from "./support/dashboards.js";
import { interpolation, optionsOf, queryResultText } from "./support/variables.js";

const variables = new Map(queryVariables(generatedDashboards()[0]!.json).map((v) => [v.name, v]));
const regexOf = (name: string) => variables.get(name)?.regex;

describe("the model of Grafana's variables", () => {
  it("gives the options of Grafana's documented example of text and value groups", () => {
    const answers = [0, 1].map(
      (i) =>
        `node_hwmon_chip_names{chip="0000:d7:00_0_0000:d8:00_${String(i)}",chip_name="enp216s0f0np${String(i)}"} 1`,
    );
    expect(optionsOf(answers, '/chip_name="(?<text>[^"]+)|chip="(?<value>[^"]+)/g')).toEqual([
      { text: "enp216s0f0np0", value: "0000:d7:00_0_0000:d8:00_0" },
      { text: "enp216s0f0np1", value: "0000:d7:00_0_0000:d8:00_1" },
    ]);
  });

  it("writes a query_result series as Grafana does", () => {
    const text = queryResultText({
      metric: { __name__: "up", instance: "a:1", job: "x" },
      value: [1521630638, "1"],
    });
    expect(text).toBe('up{instance="a:1",job="x"} 1 1521630638000');
  });
});

describe("the dashboards' variables", () => {
  it("list organisations by name, by id while the name is unknown, and send the id", () => {
    const answers = [
      { metric: { org_id: "org-cool-dew-12345678", org_name: "Acme Analytics" } },
      { metric: { org_id: "org-calm-sea-87654321", org_name: "" } },
    ].map((s) => queryResultText({ ...s, value: [1700000000, "1"] }));
    expect(optionsOf(answers, regexOf("org"))).toEqual([
      { text: "Acme Analytics", value: "org-cool-dew-12345678" },
      { text: "org-calm-sea-87654321", value: "org-calm-sea-87654321" },
    ]);
  });

  it("list projects by name, by id when not read yet, and send the id", () => {
    const answers = [
      { metric: { name: "Tenant Acme", project: "late-scene-233450" } },
      { metric: { project: "hidden-rain-748962" } },
    ].map((s) => queryResultText({ ...s, value: [1700000000, "1"] }));
    expect(optionsOf(answers, regexOf("project"))).toEqual([
      { text: "Tenant Acme", value: "late-scene-233450" },
      { text: "hidden-rain-748962", value: "hidden-rain-748962" },
    ]);
  });

  it('send "All" as anything for the filters, and as the listed projects for $project', () => {
    const listed = [
      { text: "Tenant Acme", value: "late-scene-233450" },
      { text: "b", value: "hidden-rain-748962" },
    ];
    expect(interpolation(variables.get("account")!, [], "all")).toBe(".*");
    expect(interpolation(variables.get("org")!, [], "all")).toBe(".*");
    expect(interpolation(variables.get("region")!, [], "all")).toBe(".*");
    expect(interpolation(variables.get("project")!, listed, "all")).toBe(
      "(late-scene-233450|hidden-rain-748962)",
    );
    expect(interpolation(variables.get("project")!, listed, ["late-scene-233450"])).toBe(
      "late-scene-233450",
    );
  });
});
