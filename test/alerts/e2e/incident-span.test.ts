/**
 * A platform incident's span, end to end: the daemon in-process (as the exporter builds it, with
 * the OpenTelemetry export's settings resolved from the configuration) watching the simulator
 * over real HTTP, its failures' alerts going to a local webhook receiver. `start_compute` fails
 * with one error across four projects of one region (one of them twice: retried, then failed
 * again), so that they make one incident, which resolves a window after its last failure.
 *
 * With traces on, the resolution's commit queues exactly one span in the carrier's state: from
 * the first failure's detection to the resolution, linked to each failed attempt the simulator
 * ran; restarts before and after the resolution neither lose it nor queue it again. The
 * collector answers 503 throughout, so that the span waits in the queue. With traces off,
 * nothing is queued.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorClass } from "../../../src/alerts/index.js";
import {
  resolveAccounts,
  resolveConfig,
  resolveOtlp,
  resolveSinks,
} from "../../../src/config/index.js";
import { createDaemon, type Daemon } from "../../../src/daemon/index.js";
import { apiClientFor } from "../../../src/exporter/backend.js";
import {
  FileStateStore,
  type IncidentMark,
  type IncidentSpan,
  type ProjectState,
} from "../../../src/store/index.js";
import { ProjectViews, type DaemonObserver, type PollResult } from "../../../src/sync/index.js";
import { captureLogger } from "../../support/capture-logger.js";
import { startOtlpReceiver, type OtlpReceiver } from "../../support/otlp-receiver.js";
import type { TestSimulator } from "../../support/simulator.js";
import { readStateFiles } from "../../support/state-files.js";
import { removeDir, tempDir } from "../../support/temp-dir.js";
import {
  createProject,
  exporterSettings,
  scriptOperation,
  sinkEnvironment,
  startScriptedReceiver,
  startSim,
  waitFor,
  type ScriptedReceiver,
  type SimProject,
} from "./support.js";

const WINDOW_SECONDS = 4;
const MIN_PROJECTS = 3;

/** The error a project's `start_compute` fails with: one class, with the ids of each. */
const errorOf = (p: SimProject, n: number) =>
  `safekeeper quorum not reached for endpoint ${p.endpointId} (sk-${String(n)})`;

/**
 * Hears every commit of the daemons (loaded, polled, outbox changed) and notes each time an
 * incident's span enters a project's span queue: a span queued twice shows twice, even if
 * something took it from the queue in between.
 */
class SpanWatch implements DaemonObserver {
  readonly queued: { readonly projectId: string; readonly span: IncidentSpan }[] = [];
  readonly #present = new Map<string, ReadonlySet<string>>();

  stateLoaded(projectId: string, state: ProjectState): void {
    this.#see(projectId, state);
  }

  committed(projectId: string, result: PollResult): void {
    this.#see(projectId, result.state);
  }

  outboxChanged(projectId: string, state: ProjectState): void {
    this.#see(projectId, state);
  }

  #see(projectId: string, state: ProjectState): void {
    const before = this.#present.get(projectId) ?? new Set();
    const now = new Set<string>();
    for (const { span } of state.spans ?? []) {
      if (span.kind !== "incident") continue;
      now.add(span.incidentId);
      if (!before.has(span.incidentId)) this.queued.push({ projectId, span });
    }
    this.#present.set(projectId, now);
  }
}

describe("a platform incident's span", () => {
  let sim: TestSimulator;
  let hook: ScriptedReceiver;
  let collector: OtlpReceiver;
  const dirs: string[] = [];
  const running = new Set<Daemon>();

  beforeAll(async () => {
    sim = await startSim();
    hook = await startScriptedReceiver();
    collector = await startOtlpReceiver();
    collector.setFallback({ status: 503, body: "collector down" });
  });
  afterAll(async () => {
    for (const daemon of running) await daemon.stop();
    await Promise.all([sim.close(), hook.close(), collector.close()]);
    for (const dir of dirs) await removeDir(dir);
  });

  /** Projects in `region`, their first operations ended. */
  async function projectsIn(region: string, count: number): Promise<SimProject[]> {
    const projects: SimProject[] = [];
    for (let i = 0; i < count; i++) projects.push(await createProject(sim, region));
    await sim.sim.advance(10);
    return projects;
  }

  /** The daemon watching `projects`, with traces exported or not, heard by `watch`. */
  async function startDaemon(
    stateDir: string,
    projects: readonly SimProject[],
    traces: boolean,
    watch: SpanWatch,
  ): Promise<Daemon> {
    const config = resolveConfig("incident span", [
      exporterSettings(
        sim,
        stateDir,
        projects.map((p) => p.projectId),
      ),
      {
        sinks: [{ name: "hook", kind: "webhook", groupWindow: 0.2 }],
        incidents: { window: `${String(WINDOW_SECONDS)}s`, minProjects: MIN_PROJECTS },
        ...(traces ? { otlp: { endpoint: collector.url, metrics: { enabled: false } } } : {}),
      },
    ]);
    const env = sinkEnvironment(hook.url, hook.url);
    // Where the alerts read each project's region from, as in the exporter.
    const views = new ProjectViews();
    const daemon = createDaemon(config, {
      clients: resolveAccounts(config, env).map((account) => ({
        name: account.name,
        client: apiClientFor(account, config.api),
      })),
      backend: { kind: "file", store: new FileStateStore(stateDir) },
      logger: captureLogger("warn").logger,
      observers: [views, watch],
      sinks: resolveSinks(config, env),
      names: views,
      otlp: resolveOtlp(config, env),
    });
    running.add(daemon);
    await daemon.start();
    await waitFor("every project polled, its region known", () =>
      projects.every(
        (p) =>
          daemon.project(p.projectId)?.state !== undefined &&
          views.projectRegion(p.projectId) !== undefined,
      ),
    );
    return daemon;
  }

  async function stop(daemon: Daemon): Promise<void> {
    await daemon.stop();
    running.delete(daemon);
  }

  /** The committed states of `projects` by project, as the daemon holds them. */
  const heldBy = (daemon: Daemon, projects: readonly SimProject[]) =>
    new Map(
      projects.flatMap((p) => {
        const state = daemon.project(p.projectId)?.state;
        return state === undefined ? [] : [[p.projectId, state] as const];
      }),
    );
  const statesOf = (daemon: Daemon, projects: readonly SimProject[]) => [
    ...heldBy(daemon, projects).values(),
  ];
  const marksOf = (states: readonly ProjectState[]): IncidentMark[] =>
    states.flatMap((s) => s.incidents?.marks ?? []);
  /** The project whose record says it resolved the incident, and when. */
  const resolutionIn = (states: ReadonlyMap<string, ProjectState>) => {
    for (const [projectId, state] of states) {
      const resolved = state.incidents?.resolved[0];
      if (resolved !== undefined) return { projectId, ...resolved };
    }
    return undefined;
  };

  /** Scripts a `start_compute` that fails on each project (`twice`: retried, fails again). */
  async function failEach(projects: readonly SimProject[], twice: SimProject | undefined) {
    const ids: string[] = [];
    for (const [i, p] of projects.entries()) {
      const steps = [
        { status: "running", after_seconds: 0 },
        { status: "failed", after_seconds: 1, error: errorOf(p, i) },
        ...(p === twice
          ? [
              { status: "running", after_seconds: 2 },
              { status: "failed", after_seconds: 3, error: errorOf(p, i + 10) },
            ]
          : []),
      ];
      const op = await scriptOperation(sim, p, "start_compute", steps, { onEndpoint: true });
      ids.push(op.id);
    }
    return ids;
  }

  it(
    "is queued once as the incident resolves, linked to every failed attempt, across restarts",
    { timeout: 90_000 },
    async () => {
      const region = "aws-eu-central-1";
      const projects = await projectsIn(region, 4);
      const stateDir = await tempDir("pgcp-incident-span-");
      dirs.push(stateDir);
      const watch = new SpanWatch();

      let daemon = await startDaemon(stateDir, projects, true, watch);
      const operations = await failEach(projects, projects[0]);
      await sim.sim.advance(1.5);
      await waitFor("the first failure of each project", () =>
        marksOf(statesOf(daemon, projects)).length === 4 ? true : undefined,
      );
      await sim.sim.advance(2);
      await waitFor("the retry's failure, and the incident opened", () => {
        const states = statesOf(daemon, projects);
        return marksOf(states).length === 5 &&
          states.some((s) => (s.incidents?.carried.length ?? 0) > 0)
          ? true
          : undefined;
      });
      const incidentId = marksOf(statesOf(daemon, projects)).find(
        (m) => m.incidentId !== undefined,
      )?.incidentId;

      // Restarted while the incident is open: it resolves from the committed records.
      expect(resolutionIn(heldBy(daemon, projects))).toBeUndefined();
      await stop(daemon);
      daemon = await startDaemon(stateDir, projects, true, watch);
      await waitFor(
        "the incident's resolution",
        () => resolutionIn(heldBy(daemon, projects)),
        (WINDOW_SECONDS + 20) * 1000,
      );
      await stop(daemon);

      // Restarted once resolved: a few passes of the desk and polls of each project later, the
      // span is still queued once.
      daemon = await startDaemon(stateDir, projects, true, watch);
      const from = statesOf(daemon, projects).map((s) => s.sequence);
      await waitFor("three more polls of each project", () =>
        statesOf(daemon, projects).every((s, i) => s.sequence >= (from[i] ?? 0) + 3),
      );
      await stop(daemon);

      const states = await readStateFiles(stateDir);
      const resolution = resolutionIn(states);
      expect(resolution?.id).toBe(incidentId);
      const marks = marksOf([...states.values()]);
      // The simulator's truth: each arrival at `failed`, with the failures count it left.
      const failedAttempts = (await Promise.all(projects.map((p) => sim.sim.truth(p.projectId))))
        .flat()
        .filter((op) => operations.includes(op.id))
        .flatMap((op) =>
          op.history
            .filter((h) => h.status === "failed")
            .map((h) => ({ operationId: op.id, attempt: h.failures_count })),
        );
      expect(failedAttempts).toHaveLength(5);

      expect(watch.queued).toHaveLength(1);
      const [queued] = watch.queued;
      expect(queued?.projectId).toBe(resolution?.projectId);
      const expected: IncidentSpan = {
        kind: "incident",
        incidentId: incidentId!,
        action: "start_compute",
        regionId: region,
        errorClass: errorClass(errorOf(projects[0]!, 0)),
        failures: 5,
        projectCount: 4,
        startMs: Math.min(...marks.map((m) => m.atMs)),
        endMs: resolution!.atMs,
        links: expect.arrayContaining(failedAttempts) as IncidentSpan["links"],
      };
      expect(queued?.span).toEqual(expected);
      expect(queued?.span.links).toHaveLength(failedAttempts.length);
      // What is on disk: that span, once, in the carrier's queue alone.
      const onDisk = [...states].flatMap(([projectId, s]) =>
        (s.spans ?? [])
          .filter((q) => q.span.kind === "incident")
          .map((q) => ({ projectId, span: q.span })),
      );
      expect(onDisk).toEqual([queued]);
    },
  );

  it("is not queued with traces off", { timeout: 60_000 }, async () => {
    const projects = await projectsIn("aws-us-east-2", MIN_PROJECTS);
    const stateDir = await tempDir("pgcp-incident-span-");
    dirs.push(stateDir);
    const watch = new SpanWatch();
    const daemon = await startDaemon(stateDir, projects, false, watch);
    await failEach(projects, undefined);
    await sim.sim.advance(1.5);
    await waitFor(
      "the incident's resolution",
      () =>
        statesOf(daemon, projects).some((s) => (s.incidents?.resolved.length ?? 0) > 0)
          ? true
          : undefined,
      (WINDOW_SECONDS + 20) * 1000,
    );
    await stop(daemon);
    const states = [...(await readStateFiles(stateDir)).values()];
    expect(states.flatMap((s) => s.spans ?? [])).toEqual([]);
    expect(watch.queued).toEqual([]);
  });
});
