/**
 * Endpoint listings driven by operations, on the whole exporter in-process against the
 * simulator over real HTTP: with the periodic listing ten minutes away, a start_compute seen to
 * start and to end gets the project's endpoints listed each time, and a quiet project costs
 * no listing.
 */
import { afterEach, expect, it } from "vitest";
import { startTestSimulator } from "../support/simulator.js";
import { sleep } from "../support/wait.js";
import { startTestExporter, tempDir, waitFor } from "./support.js";

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

it("lists endpoints when an operation that changes them starts and ends, not on every poll", async () => {
  const sim = await startTestSimulator();
  cleanups.push(() => sim.close());
  const created = await sim.sim.createProject({ availability_checks: false });
  const id = created.project.id;
  const e = await startTestExporter({
    api: { url: sim.apiUrl, key: sim.apiKey },
    projects: [id],
    state: { dir: await tempDir() },
    poll: { endpointsInterval: 600 },
  });
  cleanups.push(() => e.stop());
  const listings = async () =>
    (await e.value("pgcp_endpoint_listings_total", { result: "success" })) ?? 0;
  await waitFor("the first listing", async () => (await listings()) >= 1 || undefined);
  await sleep(1500);
  const quiet = await listings();

  const endpoints = await sim.api<{ endpoints: { id: string }[] }>(
    "GET",
    `/projects/${id}/endpoints`,
  );
  await sim.sim.scriptOperation({
    project_id: id,
    branch_id: created.branches[0]!.id,
    endpoint_id: endpoints.body.endpoints[0]!.id,
    action: "start_compute",
    steps: [
      { status: "running", after_seconds: 0 },
      { status: "finished", after_seconds: 2 },
    ],
  });
  await waitFor("a listing for the start", async () => (await listings()) > quiet || undefined);
  const started = await listings();
  await sim.sim.advance(3);
  await waitFor("a listing for the end", async () => (await listings()) > started || undefined);
  const ended = await listings();
  // Quiet again: the polls go on, the listings wait for the timer.
  await sleep(1500);
  expect(await listings()).toBe(ended);
  expect(quiet).toBe(1);
});
