/**
 * The dashboards in `dashboards/` are what `tools/dashboards` generates, formatted as prettier
 * formats JSON (so `prettier --check` accepts them): `UPDATE_DASHBOARDS=1 npx vitest run
 * test/dashboards/generate.test.ts` rewrites them. And they are well-formed for Grafana: unique
 * uids and panel ids, every query on the `$datasource` variable, the chained `$account`, `$org`,
 * `$region` and `$project` variables from catalogue metrics, panels that do not overlap.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { format, resolveConfig } from "prettier";
import { describe, expect, it } from "vitest";
import { DASHBOARDS, renderDashboard } from "../../tools/dashboards/index.js";
import { catalogueProblems, selectors } from "./support/promql.js";
import {
  DASHBOARD_DIR,
  FLEET_VARIABLE_NAMES,
  allPanels,
  generatedDashboards,
  panelQueries,
  type DashboardJson,
} from "./support/dashboards.js";
import { variablePromql } from "./support/variables.js";

async function formatted(file: string, text: string): Promise<string> {
  const config = await resolveConfig(DASHBOARD_DIR + file);
  return format(text, { ...config, parser: "json" });
}

describe("dashboards/*.json", () => {
  it.each(DASHBOARDS.map((d) => [d.file, d] as const))(
    "%s is what tools/dashboards generates (UPDATE_DASHBOARDS=1 rewrites it)",
    async (file, { build }) => {
      const text = await formatted(file, renderDashboard(build()));
      const path = DASHBOARD_DIR + file;
      if (process.env.UPDATE_DASHBOARDS === "1") writeFileSync(path, text);
      expect(existsSync(path), `${file} is missing: run with UPDATE_DASHBOARDS=1`).toBe(true);
      expect(readFileSync(path, "utf8")).toBe(text);
    },
  );

  it("are generated the same way twice (no time, no random id)", async () => {
    for (const { file, build } of DASHBOARDS) {
      expect(await formatted(file, renderDashboard(build()))).toBe(
        await formatted(file, renderDashboard(build())),
      );
    }
  });
});

describe.each(generatedDashboards().map(({ file, json }) => [file, json] as const))(
  "%s",
  (_file, json: DashboardJson) => {
    it("has a uid no other dashboard has", () => {
      const uids = generatedDashboards().map((d) => d.json.uid);
      expect(uids.filter((u) => u === json.uid)).toHaveLength(1);
      expect(json.uid).toMatch(/^[a-z0-9-]{1,40}$/);
    });

    it("has a $datasource variable, then $account, $org, $region and $project, chained", () => {
      const variables = json.templating.list;
      expect(variables.map((v) => v.name)).toEqual(["datasource", ...FLEET_VARIABLE_NAMES]);
      expect(variables[0]).toMatchObject({ type: "datasource", query: "prometheus" });
      variables.slice(1).forEach((variable, i) => {
        expect(variable, variable.name).toMatchObject({
          type: "query",
          datasource: { type: "prometheus", uid: "${datasource}" },
          definition: variable.query,
          includeAll: true,
          multi: true,
        });
        const query = variable.query as string;
        // Each lists what the ones before it chose, and depends on none after it.
        for (const before of FLEET_VARIABLE_NAMES.slice(0, i)) {
          expect(query, variable.name).toContain(`=~"$${before}"`);
        }
        for (const after of FLEET_VARIABLE_NAMES.slice(i)) {
          expect(query, variable.name).not.toContain(`$${after}`);
        }
        // From catalogue series, with labels they have.
        const promql = variablePromql(query);
        expect(selectors(promql).length, variable.name).toBeGreaterThan(0);
        expect(catalogueProblems(promql), variable.name).toEqual([]);
      });
      // "All" of the first three matches anything, an empty label too (a personal project has no
      // organisation); "All" of $project is the projects it lists, so that it follows them.
      expect(variables.slice(1).map((v) => v.allValue)).toEqual([".*", ".*", ".*", undefined]);
    });

    it("reads every panel and query from $datasource", () => {
      for (const panel of allPanels(json)) {
        if (panel.type === "row") continue;
        expect(panel.datasource, panel.title).toEqual({ type: "prometheus", uid: "${datasource}" });
        expect(panel.targets?.length ?? 0, `${panel.title} has no query`).toBeGreaterThan(0);
        for (const target of panel.targets ?? []) {
          expect(target.datasource, `${panel.title} ${target.refId}`).toEqual(panel.datasource);
        }
      }
    });

    it("has unique panel ids and titles, and unique refIds within a panel", () => {
      const panels = allPanels(json);
      expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
      const titles = panels.filter((p) => p.type !== "row").map((p) => p.title);
      expect(new Set(titles).size).toBe(titles.length);
      for (const p of panels) {
        const refIds = (p.targets ?? []).map((t) => t.refId);
        expect(new Set(refIds).size, p.title).toBe(refIds.length);
      }
    });

    it("lays its panels out without overlap within the 24 columns", () => {
      const taken = new Set<string>();
      for (const { gridPos: g, title } of allPanels(json)) {
        expect(g.x + g.w, title).toBeLessThanOrEqual(24);
        for (let x = g.x; x < g.x + g.w; x++) {
          for (let y = g.y; y < g.y + g.h; y++) {
            const cell = `${x},${y}`;
            expect(taken.has(cell), `${title} overlaps at ${cell}`).toBe(false);
            taken.add(cell);
          }
        }
      }
    });

    it("has queries that are instant for stats and tables, range for graphs", () => {
      for (const panel of allPanels(json)) {
        const instant = panel.type === "stat" || panel.type === "table";
        for (const t of panel.targets ?? []) {
          expect({ instant: t.instant, range: t.range }, panel.title).toEqual({
            instant,
            range: !instant,
          });
        }
      }
      expect(panelQueries(json).length).toBeGreaterThan(10);
    });
  },
);
