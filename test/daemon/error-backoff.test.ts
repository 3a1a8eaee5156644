/**
 * Projects whose log answers 500 back off and never take the healthy projects' turns, on the
 * whole exporter in-process against the simulator over real HTTP (its fault injection answers
 * the 500s and the 404): six projects under one key at its limit (120 requests a minute, polled
 * every 2 s, the client's in-poll retries as configured by default), one answering 404 and
 * three answering 500 for a minute. Gaps between reads are measured by the simulator (the
 * longest each project's log went unread), in the scheduler's intervals.
 */
import { afterEach, describe, expect, it } from "vitest";
import { PROJECT_FAILING, PROJECT_RECOVERED } from "../../src/daemon/step-effects.js";
import { startReceiver, type Receiver } from "../support/receiver.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { sleep } from "../support/wait.js";
import { committedArrivals, truthArrivals } from "../sync/support.js";
import {
  everyProjectUp,
  receivedAlerts,
  startTestExporter,
  tempDir,
  waitFor,
  type TestExporter,
} from "./support.js";

const INTERVAL_SECONDS = 2;
/** Short enough that a failing project comes back soon after the fault; its cost still fits. */
const BACKOFF_MAX_SECONDS = 20;

/** Words that tell the operations' errors apart. */
const NAMES = ["alpha", "bravo", "charlie", "delta", "echo"];

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

/** Each project's id, and its branch's (where scripted operations run). */
async function projects(sim: TestSimulator, n: number): Promise<[string, string][]> {
  const out: [string, string][] = [];
  for (let i = 0; i < n; i++) {
    const created = await sim.sim.createProject({ availability_checks: false });
    out.push([created.project.id, created.branches[0]!.id]);
  }
  return out;
}

async function exporter(
  sim: TestSimulator,
  ids: readonly string[],
  hook: Receiver,
): Promise<TestExporter> {
  const e = await startTestExporter(
    {
      api: { url: sim.apiUrl, key: sim.apiKey, requestsPerMinute: 120, maxAttempts: 5 },
      poll: {
        interval: INTERVAL_SECONDS,
        fastInterval: INTERVAL_SECONDS,
        jitter: 0.1,
        errorBackoffMax: BACKOFF_MAX_SECONDS,
      },
      log: { level: "info" },
      projects: [...ids],
      state: { dir: await tempDir() },
      sinks: [{ name: "hook", kind: "webhook", urlEnv: "PGCP_TEST_HOOK_URL", groupWindow: 0 }],
    },
    { PGCP_TEST_HOOK_URL: `${hook.url}/hook` },
  );
  cleanups.push(() => e.stop());
  await everyProjectUp(e, ids);
  return e;
}

/** The status page's row of the project. */
function rowOf(page: string, projectId: string): string {
  const start = page.indexOf(`<tr data-project="${projectId}"`);
  return start < 0 ? "" : page.slice(start, page.indexOf("</tr>", start));
}

/** 1.5 times the longest interval the scheduler plans now, and never under 1.5 configured. */
async function oneAndAHalfIntervals(e: TestExporter): Promise<number> {
  const planned = await e.value("pgcp_scheduler_poll_interval_seconds", { lane: "idle" });
  return 1.5 * Math.max(INTERVAL_SECONDS, planned ?? INTERVAL_SECONDS);
}

/** How long each project's log went unread since the last reset (the simulator's measure). */
async function unread(sim: TestSimulator, ids: readonly string[]): Promise<number[]> {
  const { unreadSecondsByProject } = await sim.sim.stats();
  return ids.map((id) => unreadSecondsByProject[id] ?? Infinity);
}

async function answered(sim: TestSimulator, status: number): Promise<number> {
  const { routes } = await sim.sim.stats();
  return Object.values(routes).reduce((n, byStatus) => n + (byStatus[String(status)] ?? 0), 0);
}

describe("projects whose log answers 500, under one key at its limit", () => {
  it("back off and recover while the healthy projects keep their interval, counts exact and no alert lost", async () => {
    const sim = await startTestSimulator();
    cleanups.push(() => sim.close());
    const hook = await startReceiver();
    cleanups.push(() => hook.close());
    const all = await projects(sim, 6);
    const ids = all.map(([id]) => id);
    const [healthy, failing, gone] = [ids.slice(0, 2), ids.slice(2, 5), ids[5]!];
    const watched = [...healthy, ...failing];
    const since = (await sim.sim.clock()).now;
    const e = await exporter(sim, ids, hook);

    await sim.sim.addFault({ project_id: gone, kind: "status", status: 404 });
    await waitFor(
      "the 404 project down",
      async () => (await e.value("pgcp_project_up", { project: gone })) === 0 || undefined,
    );
    // The plan settles without the refused project: five at the key's limit.
    await sleep(4000);

    // A minute of 500s for three projects; each project has an operation that fails meanwhile
    // (each its own failure, so that they do not group into a platform incident).
    const beforeFault = await oneAndAHalfIntervals(e);
    for (const id of failing)
      await sim.sim.addFault({ project_id: id, kind: "status", status: 500 });
    await sim.sim.resetStats();
    const faultStart = performance.now();
    const failed = await Promise.all(
      all.slice(0, 5).map(([project_id, branch_id], i) =>
        sim.sim.scriptOperation({
          project_id,
          branch_id,
          action: "apply_config",
          steps: [
            { status: "running", after_seconds: 0 },
            { status: "failed", after_seconds: 5, error: `config rejected by ${NAMES[i]}` },
          ],
        }),
      ),
    );
    await sleep(5000);
    await sim.sim.advance(6);

    // The first half, from the fault's start: the failing projects' first polls (with their
    // retries) ran at the plan of before, which the healthy ones keep to at least.
    await sleep(Math.max(0, 30_000 - (performance.now() - faultStart)));
    const firstHalf = await unread(sim, healthy);
    for (const gap of firstHalf)
      expect(gap, `healthy ${firstHalf.join(", ")} s`).toBeLessThan(beforeFault);
    for (const id of failing) {
      expect(await e.value("pgcp_project_up", { project: id })).toBe(0);
      expect(
        await e.value("pgcp_project_backoff_next_try_timestamp_seconds", {
          project: id,
          reason: "server_error",
        }),
      ).toBeGreaterThan(0);
    }
    expect(
      await e.value("pgcp_project_backoff_next_try_timestamp_seconds", {
        project: gone,
        reason: "refused",
      }),
    ).toBeGreaterThan(0);
    // The status page says why each is polled with backoff, and when it is tried next.
    const page = (await e.get("/")).text;
    for (const [id, reason] of [...failing.map((f) => [f, "server_error"]), [gone, "refused"]]) {
      expect(rowOf(page, id!)).toMatch(
        new RegExp(`class="backoff" data-reason="${reason!}">polled with backoff .*next try <time`),
      );
    }
    expect(rowOf(page, healthy[0]!)).not.toContain("backoff");

    // The second half: the failing ones back off, the healthy ones are polled at their interval.
    await sim.sim.resetStats();
    await sleep(30_000);
    const secondHalf = await unread(sim, healthy);
    for (const gap of secondHalf) {
      expect(gap, `healthy ${secondHalf.join(", ")} s`).toBeLessThan(1.5 * INTERVAL_SECONDS);
    }
    // At most one try in ten seconds each (a try is up to five attempts), not one a second.
    const errors = await answered(sim, 500);
    expect(errors, `${errors} answers of 500 in 30 s`).toBeLessThanOrEqual(3 * 3 * 5);
    expect(receivedAlerts(hook)).toEqual(
      expect.arrayContaining(failed.slice(0, 2).map((op) => `operation_failed ${op.id}`)),
    );

    // The fault ends: each failing project is back at its next try, within the backoff's bound,
    // and at its interval from then on.
    await sim.sim.clearFaults();
    await sim.sim.resetStats();
    await waitFor(
      "the failing projects up again",
      async () => {
        for (const id of failing)
          if ((await e.value("pgcp_project_up", { project: id })) !== 1) return;
        return true;
      },
      2 * BACKOFF_MAX_SECONDS * 1000,
    );
    const recovery = await unread(sim, failing);
    for (const gap of recovery) {
      expect(gap, `recovered after ${recovery.join(", ")} s`).toBeLessThan(
        BACKOFF_MAX_SECONDS + 1.5 * INTERVAL_SECONDS,
      );
    }
    await sim.sim.resetStats();
    await sleep(8000);
    const after = await unread(sim, watched);
    const bound = await oneAndAHalfIntervals(e);
    for (const gap of after) expect(gap, `after ${after.join(", ")} s`).toBeLessThan(bound);
    for (const id of failing) {
      expect(
        await e.value("pgcp_project_backoff_next_try_timestamp_seconds", { project: id }),
      ).toBeUndefined();
    }
    const pageAfter = (await e.get("/")).text;
    for (const id of watched) expect(rowOf(pageAfter, id)).not.toContain("backoff");

    // Counts exact, every alert delivered.
    for (const id of watched) {
      expect(committedArrivals(e.exporter.daemon.project(id)?.state)).toEqual(
        await truthArrivals(sim, id, since),
      );
    }
    await waitFor(
      "every alert delivered",
      () =>
        failed.every((op) => receivedAlerts(hook).includes(`operation_failed ${op.id}`)) ||
        undefined,
    );

    // One warning when each started failing, one line when it recovered; none per retry.
    for (const id of failing) {
      const said = e.logs
        .lines()
        .filter(
          (l) =>
            l.project === id &&
            (l.level === "warn" || l.level === "error" || l.msg === PROJECT_RECOVERED),
        );
      expect(said.map((l) => [l.level, l.msg])).toEqual([
        ["warn", PROJECT_FAILING],
        ["info", PROJECT_RECOVERED],
      ]);
      expect(said[0]).toMatchObject({ reason: "server_error", status: 500 });
    }
  }, 150_000);
});
