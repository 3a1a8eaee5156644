/**
 * Every PromQL expression of the shipped dashboards, their panels' and their variables', parses
 * (promtool, Debian's `prometheus` package: fails under CI when missing, skipped elsewhere) and
 * names only series of the metric catalogue, with labels their families have; every family with
 * a `project` label is filtered by the `$project` variable, and every other family with an
 * `account` label by `$account`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ACCOUNT_MATCHER, PROJECT_MATCHER } from "../../tools/dashboards/index.js";
import { requireBinary } from "../e2e/support/binaries.js";
import { loadDashboards, panelQueries, queryVariables, substitute } from "./support/dashboards.js";
import { catalogueProblems, catalogueSeries, selectors } from "./support/promql.js";
import { checkExpressions } from "./support/promtool.js";
import { variablePromql } from "./support/variables.js";

/** The panels' queries, and the PromQL of each dashboard's variables. */
const QUERIES = loadDashboards().flatMap(({ json }) => [
  ...panelQueries(json),
  ...queryVariables(json).map((v) => ({
    dashboard: json.uid,
    panel: `variable ${v.name}`,
    refId: "query",
    expr: variablePromql(v.query as string),
  })),
]);
const label = (q: (typeof QUERIES)[number]) => `${q.dashboard} / ${q.panel} / ${q.refId}`;
const SUBSTITUTIONS = { rateInterval: "5m", interval: "1m", range: "6h" };

const dir = mkdtempSync(path.join(tmpdir(), "pgcp-dashboard-queries-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("the dashboards' PromQL", () => {
  it("has queries to check", () => {
    expect(QUERIES.length).toBeGreaterThan(40);
    expect(QUERIES.filter((q) => q.panel.startsWith("variable ")).length).toBe(2 * 4);
  });

  it("parses: promtool check rules accepts each expression as a recording rule", (ctx) => {
    const promtool = requireBinary("promtool", (note) => ctx.skip(note));
    const run = checkExpressions(
      promtool,
      dir,
      QUERIES.map((q) => substitute(q.expr, SUBSTITUTIONS)),
    );
    expect(run.output).toContain(`SUCCESS: ${QUERIES.length} rules found`);
    expect(run.status, run.output).toBe(0);
  });

  it("is checked for real: promtool rejects a broken expression", (ctx) => {
    const promtool = requireBinary("promtool", (note) => ctx.skip(note));
    const run = checkExpressions(promtool, dir, [
      "sum(rate(pgcp_operations_total[5m])",
      "sum by (action) rate(pgcp_operations_total[5m])",
    ]);
    expect(run.status).not.toBe(0);
    expect(run.output).toMatch(/unclosed left parenthesis|unexpected/);
  });

  it.each(QUERIES.map((q) => [label(q), q] as const))(
    "%s names only catalogue series and their labels",
    (_name, q) => {
      expect(selectors(q.expr).length, "names no series").toBeGreaterThan(0);
      expect(catalogueProblems(q.expr)).toEqual([]);
    },
  );

  it("filters every family with a project label by $project", () => {
    const missing: string[] = [];
    for (const q of QUERIES) {
      // The variables choose the projects: they are not filtered by them.
      if (q.panel.startsWith("variable ")) continue;
      for (const s of selectors(q.expr)) {
        if (!catalogueSeries().get(s.name)?.includes("project")) continue;
        const filtered = s.matchers.some(
          (m) => `${m.label}${m.op}"${m.value}"` === PROJECT_MATCHER,
        );
        if (!filtered) missing.push(`${label(q)}: ${s.name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("filters every other family with an account label by $account", () => {
    const missing: string[] = [];
    for (const q of QUERIES) {
      if (q.panel.startsWith("variable ")) continue;
      for (const s of selectors(q.expr)) {
        const labels = catalogueSeries().get(s.name) ?? [];
        if (labels.includes("project") || !labels.includes("account")) continue;
        const filtered = s.matchers.some(
          (m) => `${m.label}${m.op}"${m.value}"` === ACCOUNT_MATCHER,
        );
        if (!filtered) missing.push(`${label(q)}: ${s.name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
