/**
 * Every PromQL expression of the shipped dashboards parses (promtool, Debian's `prometheus`
 * package: fails under CI when missing, skipped elsewhere) and names only series of the metric
 * catalogue, with labels their families have; and every family with a `project` label is
 * filtered by the `$project` variable.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_MATCHER } from "../../tools/dashboards/index.js";
import { requireBinary } from "../e2e/support/binaries.js";
import { loadDashboards, panelQueries, substitute } from "./support/dashboards.js";
import { catalogueProblems, catalogueSeries, selectors } from "./support/promql.js";
import { checkExpressions } from "./support/promtool.js";

const QUERIES = loadDashboards().flatMap(({ json }) => panelQueries(json));
const label = (q: (typeof QUERIES)[number]) => `${q.dashboard} / ${q.panel} / ${q.refId}`;
const SUBSTITUTIONS = { rateInterval: "5m", interval: "1m", range: "6h" };

const dir = mkdtempSync(path.join(tmpdir(), "pgcp-dashboard-queries-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("the dashboards' PromQL", () => {
  it("has queries to check", () => {
    expect(QUERIES.length).toBeGreaterThan(40);
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
});
