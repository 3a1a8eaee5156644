import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { format, resolveConfig } from "prettier";
import { describe, expect, it } from "vitest";
import { renderReference } from "../../src/metrics/index.js";

const DOC = fileURLToPath(new URL("../../docs/metrics.md", import.meta.url));

describe("docs/metrics.md", () => {
  it("is what renderReference() renders (UPDATE_DOCS=1 rewrites it)", () => {
    const reference = renderReference();
    if (process.env.UPDATE_DOCS === "1") writeFileSync(DOC, reference);
    expect(readFileSync(DOC, "utf8")).toBe(reference);
  });

  it("is already formatted as prettier formats it, so the lint step accepts it", async () => {
    const reference = renderReference();
    const config = await resolveConfig(DOC);
    expect(await format(reference, { ...config, parser: "markdown" })).toBe(reference);
  });
});
