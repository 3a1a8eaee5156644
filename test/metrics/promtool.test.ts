import { spawnSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { closeAll, metricsFor, render } from "./support/rendering.js";
import { PROBES, feedEverything } from "./support/scenario.js";

afterEach(closeAll);

/** Runs `promtool check metrics` on `text`, or returns undefined when promtool is not on PATH. */
function promtoolCheck(text: string): { status: number | null; output: string } | undefined {
  const run = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
  if ((run.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT") return undefined;
  if (run.error !== undefined) throw run.error;
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe("promtool check metrics", () => {
  it("accepts the full rendering, process metrics included", async (ctx) => {
    const metrics = metricsFor({ perProjectHistograms: true, ...PROBES });
    feedEverything(metrics);
    const result = promtoolCheck(await render(metrics));
    if (result === undefined) {
      const missing = "promtool is not on PATH (Debian package `prometheus`)";
      if (process.env.CI === "true") throw new Error(missing);
      return ctx.skip(`${missing}: skipped`);
    }
    expect(result.output).toBe("");
    expect(result.status).toBe(0);
  });
});
