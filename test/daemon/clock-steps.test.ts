/**
 * Time the exporter can trust, on the whole exporter in-process against the simulator over
 * real HTTP, with its webhook sink pointed at a local receiver:
 * - its wall clock stepped back an hour and forward two (as NTP or a resumed VM does; the test
 *   steps the exporter's clock, not the machine's) changes nothing in the request rate beyond
 *   one tick, and counts and alerts stay exact;
 * - the API's clock three hours behind or ahead of ours raises exactly the real stuck alerts;
 * - an API whose records are dated hours ahead of our clock costs one page per idle poll.
 *
 * The simulator's clock is manual: it moves only when a test advances it, and its answers'
 * `Date` is its own time, as a real server's.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startReceiver, type Receiver } from "../support/receiver.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { steppedClock } from "../support/stepped-clock.js";
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

const HOUR_MS = 3_600_000;

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function simulator(startTime?: Date): Promise<TestSimulator> {
  const sim = await startTestSimulator(startTime === undefined ? {} : { startTime });
  cleanups.push(() => sim.close());
  return sim;
}

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  cleanups.push(() => r.close());
  return r;
}

/** Each project's id, and its branch's (where scripted operations run). */
const branchOf = new Map<string, string>();

async function projects(sim: TestSimulator, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const created = await sim.sim.createProject({ availability_checks: false });
    branchOf.set(created.project.id, created.branches[0]!.id);
    ids.push(created.project.id);
  }
  return ids;
}

/** A scripted operation of `projectId`: running at once, then `status` after `seconds`. */
function script(
  sim: TestSimulator,
  projectId: string,
  action: string,
  status: "finished" | "failed",
  seconds: number,
) {
  return sim.sim.scriptOperation({
    project_id: projectId,
    branch_id: branchOf.get(projectId) ?? "",
    action,
    steps: [
      { status: "running", after_seconds: 0 },
      {
        status,
        after_seconds: seconds,
        ...(status === "failed" ? { error: "config rejected" } : {}),
      },
    ],
  });
}

/** An exporter polling `ids` at every tick, its webhook sink pointed at `hook`. */
async function exporter(
  sim: TestSimulator,
  ids: readonly string[],
  hook: Receiver,
  more: Record<string, unknown> = {},
  clock?: ReturnType<typeof steppedClock>["clock"],
): Promise<TestExporter> {
  const e = await startTestExporter(
    {
      api: { url: sim.apiUrl, key: sim.apiKey },
      projects: [...ids],
      state: { dir: await tempDir() },
      sinks: [{ name: "hook", kind: "webhook", urlEnv: "PGCP_TEST_HOOK_URL", groupWindow: 0 }],
      ...more,
    },
    { PGCP_TEST_HOOK_URL: `${hook.url}/hook` },
    clock,
  );
  cleanups.push(() => e.stop());
  await everyProjectUp(e, ids);
  return e;
}

/** Requests the simulator answered over `ms` of real time. */
async function requestsDuring(sim: TestSimulator, ms: number): Promise<number> {
  const before = (await sim.sim.stats()).total;
  await sleep(ms);
  return (await sim.sim.stats()).total - before;
}

function failing(sim: TestSimulator, projectId: string, afterSeconds: number) {
  return script(sim, projectId, "apply_config", "failed", afterSeconds);
}

describe("a step of the exporter's wall clock", () => {
  it("changes nothing in the request rate beyond one tick, and counts and alerts stay exact", async () => {
    const sim = await simulator();
    const hook = await receiver();
    const ids = await projects(sim, 3);
    const since = (await sim.sim.clock()).now;
    const stepped = steppedClock();
    const e = await exporter(sim, ids, hook, { stuck: { default: 30 } }, stepped.clock);
    const oneTick = ids.length;

    // Idle, every project is polled at its interval, under a second.
    const before = await requestsDuring(sim, 4000);
    expect(before).toBeGreaterThanOrEqual(3 * oneTick);

    stepped.step(-HOUR_MS);
    // Still idle: the same rate as before.
    const back = await requestsDuring(sim, 4000);
    const failedEarly = await Promise.all(ids.map((id) => failing(sim, id, 2)));
    await sim.sim.advance(3);
    await waitFor(
      "the failures raised after the step back",
      () =>
        failedEarly.every((op) => receivedAlerts(hook).includes(`operation_failed ${op.id}`)) ||
        undefined,
    );

    stepped.step(2 * HOUR_MS);
    const failedLate = await Promise.all(ids.map((id) => failing(sim, id, 5)));
    // Really stuck (30 s by the API's clock).
    const stuck = await script(sim, ids[0]!, "create_branch", "finished", 300);
    // Open, but ends well before its threshold: no stuck alert (the exact list below).
    await script(sim, ids[1]!, "create_branch", "finished", 20);
    const forward = await requestsDuring(sim, 4000);
    await sim.sim.advance(6);
    await waitFor(
      "the failures raised after the step forward",
      () =>
        failedLate.every((op) => receivedAlerts(hook).includes(`operation_failed ${op.id}`)) ||
        undefined,
    );
    await sim.sim.advance(25);
    await waitFor(
      "the stuck alert",
      () => receivedAlerts(hook).includes(`operation_stuck ${stuck.id}`) || undefined,
    );

    // The rate: within one tick's polls of what it was before either step.
    expect(
      Math.abs(back - before),
      `before ${before}, after the step back ${back}`,
    ).toBeLessThanOrEqual(oneTick + 1);
    // With open operations the polls also follow them: at least the idle rate.
    expect(
      forward + oneTick + 1,
      `before ${before}, after the step forward ${forward}`,
    ).toBeGreaterThanOrEqual(before);

    // Counts exact once each project's next poll has read what ended last (the create_branch
    // that ended at 20 s may not be read yet); every alert once, and no stuck alert but the
    // real one.
    for (const id of ids) {
      const truth = await truthArrivals(sim, id, since);
      const committed = () => committedArrivals(e.exporter.daemon.project(id)?.state);
      const same = () => {
        const sorted = (counts: object) => JSON.stringify(Object.entries(counts).sort());
        return sorted(committed()) === sorted(truth) ? true : undefined;
      };
      await waitFor(`${id}'s counts`, same).catch(() => undefined);
      expect(committed()).toEqual(truth);
    }
    await waitFor(
      "every alert acknowledged",
      () =>
        ids.every((id) => (e.exporter.daemon.project(id)?.state?.outbox.length ?? 1) === 0) ||
        undefined,
    );
    const got = receivedAlerts(hook);
    expect([...got].sort()).toEqual(
      [
        ...[...failedEarly, ...failedLate].map((op) => `operation_failed ${op.id}`),
        `operation_stuck ${stuck.id}`,
      ].sort(),
    );
  }, 60_000);
});

describe("the API's clock hours away from ours", () => {
  it.each([
    ["behind", -3 * HOUR_MS],
    ["ahead", 3 * HOUR_MS],
  ])(
    "three hours %s raises exactly the real stuck alerts",
    async (_how, skewMs) => {
      const sim = await simulator(new Date(Date.now() + skewMs));
      const hook = await receiver();
      const [id] = await projects(sim, 1);
      const e = await exporter(sim, [id!], hook, { stuck: { default: 20 } });
      const finishing = (seconds: number) => script(sim, id!, "apply_config", "finished", seconds);
      await finishing(5);
      const slow = await finishing(100);
      await waitFor(
        "both seen open",
        async () =>
          (await e.value("pgcp_operations_open", {
            project: id!,
            action: "apply_config",
            status: "running",
          })) === 2 || undefined,
      );
      await sim.sim.advance(10);
      await waitFor(
        "the quick one counted as finished",
        async () =>
          (await e.value("pgcp_operations_total", {
            project: id!,
            action: "apply_config",
            status: "finished",
          })) === 1 || undefined,
      );
      await sim.sim.advance(15);
      await waitFor(
        "the stuck alert",
        () => receivedAlerts(hook).includes(`operation_stuck ${slow.id}`) || undefined,
      );
      // The one that ended in 5 s raised none.
      expect(receivedAlerts(hook)).toEqual([`operation_stuck ${slow.id}`]);
      // The status page shows its age on the API's clock too: about 25 s, not hours.
      const page = (await e.get("/")).text;
      const shown = new RegExp(`running</span> for (\\d+) s <code>${slow.id}`).exec(page);
      expect(Number(shown?.[1])).toBeGreaterThanOrEqual(25);
      expect(Number(shown?.[1])).toBeLessThan(60);
    },
    30_000,
  );
});

describe("an API whose records are dated hours ahead of our clock", () => {
  it("costs one page per idle poll, however many records it has", async () => {
    const sim = await simulator(new Date(Date.now() + 3 * HOUR_MS));
    const hook = await receiver();
    const [id] = await projects(sim, 1);
    const e = await exporter(sim, [id!], hook, { poll: { firstPageLimit: 5, pageLimit: 5 } });
    for (let i = 0; i < 40; i++) {
      await script(sim, id!, "apply_config", "finished", 1);
      await sim.sim.advance(1);
    }
    await sim.sim.advance(2);
    await waitFor(
      "the 40 operations counted",
      async () =>
        (await e.value("pgcp_operations_total", {
          project: id!,
          action: "apply_config",
          status: "finished",
        })) === 40 || undefined,
    );
    const commits = async () =>
      (await e.value("pgcp_state_commits_total", { result: "success" })) ?? 0;
    const before = { pages: await listed(sim), commits: await commits() };
    await sleep(3000);
    const polls = (await commits()) - before.commits;
    const pages = (await listed(sim)) - before.pages;
    expect(polls).toBeGreaterThanOrEqual(2);
    // A poll in flight at either end of the window may count on one side only.
    expect(Math.abs(pages - polls), `${pages} pages in ${polls} polls`).toBeLessThanOrEqual(1);
    expect(
      await e.value("pgcp_api_anomalies_total", { project: id!, kind: "future_record" }),
    ).toBeUndefined();
  }, 30_000);
});

async function listed(sim: TestSimulator): Promise<number> {
  return (await sim.sim.stats()).routes.listOperations?.["200"] ?? 0;
}
