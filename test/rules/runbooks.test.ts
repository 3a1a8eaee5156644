/**
 * Every alert rule of `config/prometheus/alerts.yml` carries a `runbook_url` that links to its
 * own section of `docs/runbooks.md` (by GitHub's heading anchors), and that document is sound:
 * one section per alert and no other, each saying what the alert means, its likely causes, what
 * to check and what to do; only metrics and labels of the catalogue; queries promtool parses;
 * links to places that exist.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CATALOGUE } from "../../src/metrics/definitions/catalogue.js";
import { requireBinary } from "../e2e/support/binaries.js";
import { catalogueProblems, catalogueSeries } from "../dashboards/support/promql.js";
import { checkExpressions } from "../dashboards/support/promtool.js";
import { codeBlocks, headings, linkTargets } from "./markdown.js";
import { loadAlertRules } from "./support.js";
import { removeDir, tempDir } from "../support/temp-dir.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const RUNBOOKS = "docs/runbooks.md";
const DOC = readFileSync(path.join(ROOT, RUNBOOKS), "utf8");
const HEADINGS = headings(DOC);
const ALERT_RULES = loadAlertRules();

/** What each runbook says, in this order. */
const PARTS = ["**Means.**", "**Likely causes.**", "**Check.**", "**Do.**"];

/**
 * The anchor a runbook_url points at: the URL is the document's path from the repository's
 * root, or an absolute address ending in that path (alerts.yml's header says how to make it so).
 */
function runbookAnchor(url: string): string | undefined {
  const match = /^(?:https?:\/\/[^\s#]+\/)?docs\/runbooks\.md#([^\s#]+)$/.exec(url);
  return match?.[1];
}

describe("runbook_url", () => {
  it.each(ALERT_RULES.map((r) => [r.alert, r] as const))(
    "%s links to its own section of docs/runbooks.md",
    (alert, rule) => {
      const url = rule.annotations?.runbook_url;
      expect(url, "runbook_url annotation").toBeTypeOf("string");
      const anchor = runbookAnchor(url!);
      expect(anchor, `${url} is not ${RUNBOOKS}#<anchor>`).toBeDefined();
      const heading = HEADINGS.find((h) => h.anchor === anchor);
      expect(heading, `${RUNBOOKS} has no heading with the anchor #${anchor}`).toBeDefined();
      expect(heading!.text).toBe(alert);
    },
  );

  it("tells apart an anchor that exists from one that does not", () => {
    expect(runbookAnchor("docs/runbooks.md#pgcpexporterdown")).toBe("pgcpexporterdown");
    expect(
      runbookAnchor("https://git.example.internal/p/blob/main/docs/runbooks.md#pgcpexporterdown"),
    ).toBe("pgcpexporterdown");
    expect(runbookAnchor("docs/metrics.md#pgcpexporterdown")).toBeUndefined();
    expect(HEADINGS.some((h) => h.anchor === "pgcpexporter-down")).toBe(false);
  });
});

describe("docs/runbooks.md", () => {
  const sections = HEADINGS.filter((h) => h.level === 2);

  it("has one section per alert rule, in the rules' order, and no other", () => {
    expect(sections.map((h) => h.text)).toEqual(ALERT_RULES.map((r) => r.alert));
  });

  it.each(sections.map((h) => [h.text, h.body] as const))(
    "%s says what it means, its likely causes, what to check and what to do",
    (_alert, body) => {
      const at = PARTS.map((part) => body.indexOf(part));
      for (const [i, part] of PARTS.entries()) expect(at[i], part).toBeGreaterThanOrEqual(0);
      expect([...at].sort((a, b) => a - b)).toEqual(at);
    },
  );

  it("names only metrics of the catalogue", () => {
    const known = new Set([...catalogueSeries().keys(), ...CATALOGUE.map((m) => m.name)]);
    const named = new Set(DOC.match(/\bpgcp_[a-z0-9_]+/g) ?? []);
    expect(named.size).toBeGreaterThan(0);
    expect([...named].filter((name) => !known.has(name))).toEqual([]);
  });

  it("queries only series of the catalogue, with their labels", () => {
    const queries = codeBlocks(DOC, "promql");
    expect(queries.length).toBeGreaterThan(0);
    expect(queries.flatMap((q) => catalogueProblems(q))).toEqual([]);
  });

  it("has queries promtool parses", async (ctx) => {
    const promtool = requireBinary("promtool", (note) => ctx.skip(note));
    const dir = await tempDir("pgcp-runbooks-");
    try {
      const run = checkExpressions(promtool, dir, codeBlocks(DOC, "promql"));
      expect(run.status, run.output).toBe(0);
    } finally {
      await removeDir(dir);
    }
  });

  it("links to files and headings that exist", () => {
    const targets = linkTargets(DOC).filter((t) => !/^[a-z]+:/.test(t));
    expect(targets.length).toBeGreaterThan(0);
    const problems = targets.flatMap((target) => {
      const [file, anchor] = target.split("#");
      const resolved = file === "" ? path.join(ROOT, RUNBOOKS) : path.resolve(ROOT, "docs", file!);
      if (!existsSync(resolved)) return [`${target}: no such file`];
      if (anchor === undefined) return [];
      const anchors = resolved.endsWith(".md")
        ? headings(readFileSync(resolved, "utf8")).map((h) => h.anchor)
        : [];
      return anchors.includes(anchor) ? [] : [`${target}: no such heading`];
    });
    expect(problems).toEqual([]);
  });
});
