/**
 * The README and the pages of `docs/` as a reader follows them: every relative link leads to a
 * file that exists, and every `#anchor` to a heading of its page (GitHub's anchors). The README's
 * minimal configuration is one `check-config` accepts.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { resolveConfig, resolveSinks } from "../../src/config/index.js";
import { codeBlocks, headings, linkTargets } from "../rules/markdown.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

const PAGES = [
  "README.md",
  ...readdirSync(path.join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

/** The problems of one page's relative links: a file that does not exist, or no such heading. */
function linkProblems(page: string): string[] {
  const text = readFileSync(path.join(ROOT, page), "utf8");
  const targets = linkTargets(text).filter((t) => !/^[a-z]+:/.test(t));
  return targets.flatMap((target) => {
    const [file = "", anchor] = target.split("#");
    const resolved =
      file === "" ? path.join(ROOT, page) : path.resolve(ROOT, path.dirname(page), file);
    if (!existsSync(resolved)) return [`${page}: ${target}: no such file`];
    if (anchor === undefined || !resolved.endsWith(".md")) return [];
    const anchors = headings(readFileSync(resolved, "utf8")).map((h) => h.anchor);
    return anchors.includes(anchor) ? [] : [`${page}: ${target}: no such heading`];
  });
}

describe("links", () => {
  it.each(PAGES.map((page) => [page] as const))(
    "%s links to files and headings that exist",
    (page) => {
      expect(linkProblems(page)).toEqual([]);
    },
  );
});

describe("the README's minimal configuration", () => {
  it("is valid, with its sink's URL from the environment", () => {
    const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
    const block = codeBlocks(readme, "yaml").find((b) => b.startsWith("# pgcp-exporter.yaml"));
    expect(block, "README.md has a yaml block starting # pgcp-exporter.yaml").toBeDefined();
    const env = { PGCP_SLACK_WEBHOOK_URL: "https://hooks.slack.com/services/T0/B0/x" };
    const config = resolveConfig("README.md", [
      parse(block!) as Record<string, unknown>,
      { api: { key: "k" } },
    ]);
    expect(resolveSinks(config, env).map((s) => s.config.name)).toEqual(["slack"]);
  });
});
