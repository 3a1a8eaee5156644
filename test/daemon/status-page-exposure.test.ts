/**
 * What the status page shows to anyone who can reach the port (`status.page`): by default the
 * full page (project ids, failures, the API address); `summary`, the counts only; `off`, no
 * page at all. The whole exporter in-process against the simulator, read over HTTP.
 */
import { expect, it, type TestContext } from "vitest";
import type { TestSimulator } from "../support/simulator.js";
import { simulatorWithProject } from "../support/simulator-suite.js";
import { startTestExporter, tempDir, waitFor, type TestExporter } from "./support.js";

let sim: TestSimulator;
let projectId: string;

simulatorWithProject((s) => ({ sim, projectId } = s));

async function exporter(ctx: TestContext, page?: string): Promise<TestExporter> {
  const e = await startTestExporter({
    api: { url: sim.apiUrl, key: sim.apiKey },
    projects: [projectId],
    state: { dir: await tempDir() },
    ...(page === undefined ? {} : { status: { page } }),
  });
  ctx.onTestFinished(() => e.stop());
  await waitFor("a committed poll", async () => (await e.get("/readyz")).status === 200);
  return e;
}

const apiHost = () => new URL(sim.apiUrl).host;

it("shows projects and the API address by default", async (ctx) => {
  const page = await (await exporter(ctx)).get("/");
  expect(page.status).toBe(200);
  expect(page.text).toContain(projectId);
  expect(page.text).toContain(apiHost());
});

it("shows only counts with status.page: summary", async (ctx) => {
  const page = await (await exporter(ctx, "summary")).get("/");
  expect(page.status).toBe(200);
  expect(page.text).toContain('id="count-projects"><b>1</b> project');
  expect(page.text).toContain("counts only");
  expect(page.text).not.toContain(projectId);
  expect(page.text).not.toContain(apiHost());
});

it("serves no page with status.page: off, and the rest as ever", async (ctx) => {
  const e = await exporter(ctx, "off");
  expect((await e.get("/")).status).toBe(404);
  expect((await e.get("/metrics")).status).toBe(200);
  expect((await e.get("/healthz")).status).toBe(200);
});
