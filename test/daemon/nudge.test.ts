/**
 * `POST /-/nudge` on the whole exporter in-process against the simulator over real HTTP: a
 * nudged project is polled within a second although its next poll was a minute away; a nudge
 * for a project the exporter does not watch, or that is not a nudge at all, is refused with a
 * clear answer; a second nudge within the fast interval is coalesced into the first.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { startTestExporter, tempDir, waitFor, type TestExporter } from "./support.js";

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function setUp(): Promise<{ sim: TestSimulator; e: TestExporter; id: string }> {
  const sim = await startTestSimulator();
  cleanups.push(() => sim.close());
  const id = (await sim.sim.createProject({ availability_checks: false })).project.id;
  // Polled once within the first 2 s, then every minute.
  const e = await startTestExporter({
    api: { url: sim.apiUrl, key: sim.apiKey },
    projects: [id],
    state: { dir: await tempDir() },
    poll: { interval: 60, fastInterval: 2 },
  });
  cleanups.push(() => e.stop());
  await waitFor(
    "the first poll",
    async () => (await e.value("pgcp_project_up", { project: id })) === 1 || undefined,
  );
  return { sim, e, id };
}

async function nudge(
  e: TestExporter,
  query: string,
  init: RequestInit = { method: "POST" },
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${e.exporter.server.url}/-/nudge${query}`, init);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const commits = async (e: TestExporter) =>
  (await e.value("pgcp_state_commits_total", { result: "success" })) ?? 0;

describe("a nudge", () => {
  it("polls the project within a second, and coalesces a second nudge into the first", async () => {
    const { e, id } = await setUp();
    const before = await commits(e);
    const asked = performance.now();
    expect(await nudge(e, `?project=${id}`)).toEqual({
      status: 202,
      body: { nudged: [id], coalesced: [] },
    });
    await waitFor("the nudged poll", async () => (await commits(e)) > before || undefined, 1000);
    expect(performance.now() - asked).toBeLessThan(1000);
    // Within the fast interval (2 s) the poll just made answers for it.
    expect(
      await nudge(e, "", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ projects: [id] }),
      }),
    ).toEqual({ status: 202, body: { nudged: [], coalesced: [id] } });
  });

  it("is refused, naming them, for projects the exporter does not watch, and nothing is polled", async () => {
    const { e, id } = await setUp();
    const before = await commits(e);
    const refused = await nudge(e, `?project=${id}&project=not-watched-1`);
    expect(refused).toEqual({
      status: 404,
      body: {
        error: "not watched by this exporter: not-watched-1",
        unknown: ["not-watched-1"],
      },
    });
    expect(await commits(e)).toBe(before);
  });

  it("is refused with what to send when it is not a nudge", async () => {
    const { e } = await setUp();
    expect((await nudge(e, "")).status).toBe(400);
    expect((await nudge(e, "?project=Not_An_Id")).body.error).toMatch(/not a project id/);
    const notJson = await nudge(e, "", { method: "POST", body: "{projects" });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error).toMatch(/not JSON/);
    const get = await fetch(`${e.exporter.server.url}/-/nudge?project=x`);
    expect([get.status, get.headers.get("allow")]).toEqual([405, "POST"]);
    await get.text();
  });
});
