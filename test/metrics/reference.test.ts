import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { format, resolveConfig } from "prettier";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderReference, type SeriesCounts } from "../../src/metrics/index.js";
import { FLEET_BRANCHES, FLEET_ENDPOINTS, feedFleet } from "./support/fleet.js";
import { closeAll, metricsFor, render } from "./support/rendering.js";

const DOC = fileURLToPath(new URL("../../docs/metrics.md", import.meta.url));
const PROJECTS = 1000;

let counts: SeriesCounts;

beforeAll(async () => {
  // Every family (full, and the opt-in one), so that each family's series are counted.
  const metrics = metricsFor({ detail: "full", perProjectHistograms: true });
  feedFleet(metrics, PROJECTS);
  const byFamily = new Map<string, number>();
  const families = new Set<string>();
  for (const line of (await render(metrics)).split("\n")) {
    const declared = /^# TYPE (\S+) /.exec(line)?.[1];
    if (declared !== undefined) families.add(declared);
    if (line === "" || line.startsWith("#")) continue;
    const name = /^[^{ ]+/.exec(line)![0];
    const family = families.has(name) ? name : name.replace(/_(bucket|sum|count)$/, "");
    byFamily.set(family, (byFamily.get(family) ?? 0) + 1);
  }
  counts = {
    fleet: `${PROJECTS.toLocaleString("en-US")} projects with ${FLEET_ENDPOINTS} endpoints, ${FLEET_BRANCHES} branches and 11 operation series (10 actions, one of them also failed) each`,
    byFamily,
  };
});

afterAll(closeAll);

describe("docs/metrics.md", () => {
  it("is what renderReference() renders (UPDATE_DOCS=1 rewrites it)", () => {
    const reference = renderReference(counts);
    if (process.env.UPDATE_DOCS === "1") writeFileSync(DOC, reference);
    expect(readFileSync(DOC, "utf8")).toBe(reference);
  });

  it("is already formatted as prettier formats it, so the lint step accepts it", async () => {
    const reference = renderReference(counts);
    const config = await resolveConfig(DOC);
    expect(await format(reference, { ...config, parser: "markdown" })).toBe(reference);
  });
});
