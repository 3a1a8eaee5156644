/**
 * `npm run soak` (`npm run soak:ci` for the short run CI makes): the real daemon
 * (`node dist/cli.js run`) against a simulator with live traffic that injects, at random, 429
 * bursts with `Retry-After`, 5xx, 423, latency spikes, malformed and truncated bodies and
 * dropped connections, with its webhook sink suffering outages (5xx, 429, dropped connections,
 * answers after the sink's timeout), while the daemon is killed with SIGKILL and restarted at
 * random moments (some of them right after the sink answered 2xx, before the daemon can
 * commit the acknowledgement). In the middle, one run is left alone for a third of the soak,
 * to watch its memory.
 *
 * At the end the faults stop, the simulator's clock is frozen, and a last run catches up and
 * delivers what is left, then stops with SIGTERM. Checked:
 * - the end-state arrivals persisted on disk equal the simulator's ground truth, exactly;
 * - every failure of the truth (an arrival at `failed` or `error`) reached the webhook with a
 *   2xx at least once, and nothing else did; an alert delivered twice must have been first
 *   delivered by the last 2xx answer a killed run received (the at-least-once window);
 * - every such failure was also posted to the Alertmanager sink's receiver (firing, or resolved
 *   with its recovery), and no other failure was;
 * - memory: the long run's heap and RSS at its end are not far above those a quarter in;
 * - the log shows every fault class handled (a logged failure naming it), the daemon logged no
 *   unexpected error, and every run but the killed ones exited cleanly.
 *
 * Settings (environment): SOAK_SECONDS (default 600; `soak:ci` 75), SOAK_PROJECTS (8; 4),
 * SOAK_SEED (random, printed), SOAK_OUT (default `test/soak/results.json`; `soak:ci` writes to
 * `.bench/`). Exit status 1 when a check fails.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp } from "node:fs/promises";
import path from "node:path";
import { writeJson } from "../bench/lib/json-file.js";
import { UNTHROTTLED_API, writeDaemonConfig } from "../support/daemon-config.js";
import { keepClockMoving } from "../support/moving-clock.js";
import { seededRandom, seedFromEnv, shuffled } from "../support/random.js";
import { startReceiver, type ResponseSpec } from "../support/receiver.js";
import { startTestSimulator } from "../support/simulator.js";
import { readStateFiles } from "../support/state-files.js";
import { removeDir } from "../support/temp-dir.js";
import { sleep, Stop } from "../support/wait.js";
import {
  committedArrivals,
  diffArrivals,
  micros,
  truthEnds,
  type Arrivals,
} from "../sync/support.js";
import { deliveredAlerts } from "./deliveries.js";
import {
  alive,
  CLI,
  REPOSITORY,
  otherOutputProblems,
  residentBytes,
  scrape,
  SOAK_BATCHING,
  SOAK_POLL,
  SOAK_TRAFFIC,
  spawnRun,
  type DaemonRun,
  type LogLine,
} from "./daemon.js";
import {
  API_FAULT_CLASSES,
  API_MAX_RESPONSE_BYTES,
  API_TIMEOUT_SECONDS,
  SINK_OUTAGE_MODES,
  SINK_TIMEOUT_SECONDS,
  classOf,
  faultSpec,
  outageAnswer,
  pick,
  retryReasonMatches,
  type ApiFaultClass,
  type SinkOutageMode,
} from "./faults.js";
import { soakReport, type SoakResults } from "./report.js";

interface Profile {
  readonly seconds: number;
  readonly projects: number;
  /** A run is killed this long after its spawn (ms), uniform. */
  readonly runMs: { readonly min: number; readonly max: number };
  /** Downtime between a kill and the next spawn (ms). */
  readonly downMs: { readonly min: number; readonly max: number };
  /** API faults come in storms (a fault every `faultEveryMs`), with calm between them (ms). */
  readonly stormMs: { readonly min: number; readonly max: number };
  readonly calmMs: { readonly min: number; readonly max: number };
  readonly faultEveryMs: { readonly min: number; readonly max: number };
  /** Pause between two sink outages, and their length (ms). */
  readonly outageEveryMs: { readonly min: number; readonly max: number };
  readonly outageMs: { readonly min: number; readonly max: number };
  /** The last run's time to catch up and deliver everything. */
  readonly finalMs: number;
}

function profile(): Profile {
  const ci = process.argv.includes("--ci");
  const seconds = Number(process.env.SOAK_SECONDS ?? (ci ? 75 : 600));
  const projects = Number(process.env.SOAK_PROJECTS ?? (ci ? 4 : 8));
  if (!(seconds >= 20) || !(projects >= 1)) {
    throw new Error("SOAK_SECONDS must be at least 20 and SOAK_PROJECTS at least 1");
  }
  return ci || seconds < 200
    ? {
        seconds,
        projects,
        runMs: { min: 1500, max: 9000 },
        downMs: { min: 0, max: 1500 },
        stormMs: { min: 3000, max: 8000 },
        calmMs: { min: 2000, max: 6000 },
        faultEveryMs: { min: 150, max: 800 },
        outageEveryMs: { min: 3000, max: 8000 },
        outageMs: { min: 2000, max: 6000 },
        finalMs: 90_000,
      }
    : {
        seconds,
        projects,
        runMs: { min: 2000, max: 40_000 },
        downMs: { min: 0, max: 3000 },
        stormMs: { min: 3000, max: 15_000 },
        calmMs: { min: 3000, max: 20_000 },
        faultEveryMs: { min: 150, max: 1000 },
        outageEveryMs: { min: 5000, max: 25_000 },
        outageMs: { min: 1000, max: 15_000 },
        finalMs: 120_000,
      };
}

/** Error-level log lines the faults may cause (the API's listing of projects failing). */
const EXPECTED_ERRORS = new Set([
  "project discovery failed; its projects found before are kept, and it is retried",
]);

/** The log line that shows a fault class handled: a logged failure that names it. */
const EVIDENCE: Record<ApiFaultClass, (l: LogLine) => boolean> = {
  "429": (l) => l.status === 429,
  "5xx": (l) => typeof l.status === "number" && l.status >= 500 && l.status <= 599,
  "423": (l) => l.status === 423,
  latency: (l) => l.kind === "timeout",
  malformed: (l) => l.kind === "invalid_response" && l.code === "invalid_json",
  // A body cut short and a connection closed without an answer both end the same way for the
  // client: the socket closes before the response is complete.
  truncated: (l) => l.kind === "network",
  drop: (l) => l.kind === "network",
  drip: (l) => l.kind === "timeout" && l.code === "DEADLINE_EXCEEDED",
  oversized: (l) => l.code === "response_too_large",
  overlap: (l) => l.anomaly === "duplicate_record",
  // The walk finds the loop, or the client a page that hands back its own cursor; discovery
  // finds it in the projects list.
  cursor_cycle: (l) => typeof l.error === "string" && /pagination\.cursor/.test(l.error),
  no_pagination: (l) => typeof l.error === "string" && /without pagination\.cursor/.test(l.error),
  foreign_project: (l) => l.anomaly === "foreign_project",
  future_date: (l) => l.anomaly === "future_record",
  out_of_order: (l) => l.anomaly === "out_of_order_record",
};

/**
 * Hits from which a fault class must show. An overlap shows only where it hits a walk's page (a
 * record read twice in one walk); most cursored requests are the re-reads of followed
 * operations' pages, where the record too many is one more read of an operation, changes
 * nothing and is not reported. In a run that logged them, 5 overlaps of 24 hit a walk; over
 * five runs, 0 of 9 to 1 of 6 showed. The hits come in bursts, and 27 once showed none.
 */
const LEAST_HITS_SHOWN: Record<ApiFaultClass, number> = {
  ...(Object.fromEntries(API_FAULT_CLASSES.map((c) => [c, 10])) as Record<ApiFaultClass, number>),
  overlap: 60,
};

async function main(): Promise<void> {
  const p = profile();
  const seed = seedFromEnv("SOAK_SEED");
  const random = seededRandom(seed);
  const between = (r: { min: number; max: number }) => r.min + random() * (r.max - r.min);
  // The short run of CI writes beside the build; the long one, the figures of the docs.
  const out =
    process.env.SOAK_OUT ??
    path.join(
      REPOSITORY,
      process.argv.includes("--ci") ? ".bench/soak-ci.json" : "test/soak/results.json",
    );
  const log = (message: string) => {
    const t = ((Date.now() - t0) / 1000).toFixed(0).padStart(4);
    process.stderr.write(`[${t} s] ${message}\n`);
  };
  const t0 = Date.now();
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  log(`soak: ${p.seconds} s, ${p.projects} projects, seed ${seed} (replay with SOAK_SEED=${seed})`);

  await mkdir(path.join(REPOSITORY, ".bench"), { recursive: true });
  const dir = await mkdtemp(path.join(REPOSITORY, ".bench", "soak-"));
  const stateDir = path.join(dir, "state");
  const sim = await startTestSimulator({
    seed,
    startTime: new Date(),
    availabilityCheckSeconds: 120,
    traffic: { projects: p.projects, ...SOAK_TRAFFIC },
  });

  // The sink: a webhook receiver whose answers the soak scripts.
  const answers: (number | "drop")[] = [];
  const outage: { mode: SinkOutageMode | undefined } = { mode: undefined };
  const outageRequests: Record<string, number> = {};
  const killArmed = { on: false, fired: 0 };
  let current: DaemonRun | undefined;
  // The Alertmanager sink's receiver: it answers as Alertmanager's POST /api/v2/alerts does
  // (200, an empty body) and suffers the same outages. A real Alertmanager is tested in
  // test/alerts/e2e/alertmanager.test.ts; here what counts is that every failure is posted.
  const amAnswers: (number | "drop")[] = [];
  const alertmanager = await startReceiver({
    fallback: (request) => {
      const spec: ResponseSpec =
        outage.mode === undefined ? { status: 200 } : outageAnswer(random, outage.mode);
      amAnswers[request.index] = "drop" in spec ? "drop" : (spec.status ?? 200);
      return spec;
    },
  });
  const receiver = await startReceiver({
    fallback: (request) => {
      let spec: ResponseSpec = { status: 200, body: "ok" };
      if (outage.mode !== undefined) {
        spec = outageAnswer(random, outage.mode);
        outageRequests[outage.mode] = (outageRequests[outage.mode] ?? 0) + 1;
      } else if (killArmed.on && current !== undefined) {
        // Kill right after this 2xx: before the daemon commits its acknowledgement, usually.
        killArmed.on = false;
        killArmed.fired += 1;
        const victim = current;
        setTimeout(() => victim.child.kill("SIGKILL"), Math.floor(random() * 15));
      }
      answers[request.index] = "drop" in spec ? "drop" : (spec.status ?? 200);
      return spec;
    },
  });

  const configFile = path.join(dir, "config.yaml");
  await writeDaemonConfig(configFile, {
    api: {
      url: sim.apiUrl,
      // The simulator has no rate limit here; the injected 429s are the rate limiting.
      ...UNTHROTTLED_API,
      timeout: API_TIMEOUT_SECONDS,
      maxAttempts: 3,
      maxResponseBytes: API_MAX_RESPONSE_BYTES,
    },
    projects: "all",
    discoveryInterval: 5,
    state: { dir: stateDir },
    poll: SOAK_POLL,
    sinks: [
      { name: "hook", kind: "webhook", timeout: SINK_TIMEOUT_SECONDS, ...SOAK_BATCHING },
      {
        name: "am",
        kind: "alertmanager",
        urlsEnv: "SOAK_ALERTMANAGER_URL",
        timeout: SINK_TIMEOUT_SECONDS,
        ...SOAK_BATCHING,
        resendInterval: 2,
      },
    ],
    log: { level: "info", format: "json" },
  });
  const env = {
    PGCP_API_KEY: sim.apiKey,
    PGCP_WEBHOOK_URL: `${receiver.url}/hooks/soak`,
    SOAK_ALERTMANAGER_URL: alertmanager.url,
  };

  const runs: DaemonRun[] = [];
  const runInfo: {
    n: number;
    firstRequest: number;
    endRequest: number;
    ms: number;
    ending: "SIGKILL" | "SIGTERM" | "exit";
    exit: string;
    peakRss: number;
  }[] = [];
  const memory: { t: number; run: number; rss?: number; heap?: number }[] = [];
  const faultsFired = new Map<string, { cls: ApiFaultClass; fired: number; mild: boolean }>();
  const faultCounts: Record<ApiFaultClass, number> = Object.fromEntries(
    API_FAULT_CLASSES.map((c) => [c, 0]),
  ) as Record<ApiFaultClass, number>;
  const outages: Record<SinkOutageMode, number> = Object.fromEntries(
    SINK_OUTAGE_MODES.map((m) => [m, 0]),
  ) as Record<SinkOutageMode, number>;
  const retriesSeen: Record<string, number> = {};
  /** Per run, the retries by reason its `/metrics` showed last. */
  const lastRetries = new Map<number, Record<string, number>>();
  const problems: string[] = [];

  const readFaults = async () => {
    for (const f of await sim.sim.listFaults()) {
      // A latency spike within the API timeout is handled by waiting: nothing to show for it.
      const mild = f.kind === "latency" && (f.latency_ms ?? 0) < API_TIMEOUT_SECONDS * 1000;
      faultsFired.set(f.id, { cls: classOf(f), fired: f.fired, mild });
    }
  };

  try {
    // First start with the clock frozen: every project gets its checkpoint before anything
    // happens, so that every arrival after `since` is one the daemon must count.
    const first = spawnRun(1, CLI, configFile, env);
    runs.push(first);
    current = first;
    const projectIds = await sim.projectIds();
    for (;;) {
      const states = await readStateFiles(stateDir);
      if (projectIds.every((id) => states.has(id))) break;
      if (first.child.exitCode !== null) throw new Error(`the first run exited: ${first.text()}`);
      await sleep(100);
    }
    const since = micros(sim.simulator.now().toISOString());
    log(`${projectIds.length} projects have a checkpoint; traffic and faults start`);

    // The simulated clock: 1-3 s every 100 ms of wall time.
    const stopClock = keepClockMoving(sim, { seconds: () => 1 + random() * 2, pauseMs: () => 100 });

    // API faults, each a burst with a count; read and cleared every 20 s.
    const chaos = new Stop();
    /** A background loop's failure ends the soak with a problem, not an unhandled rejection. */
    const guarded = (name: string, loop: Promise<void>) =>
      loop.catch((error: unknown) => {
        problems.push(`the ${name} loop failed: ${String(error)}`);
        chaos.stop();
      });
    const faultLoop = guarded(
      "fault",
      (async () => {
        while (!chaos.stopped()) {
          // A storm: a burst of faults of random classes on random routes, then calm (the
          // faults left are read and cleared), so that the daemon gets work done between storms.
          const stormEnd = Date.now() + between(p.stormMs);
          if (process.env.SOAK_VERBOSE === "1") log("API fault storm");
          // Every class in turn, in a shuffled order, so that each one is injected as often.
          let order: ApiFaultClass[] = [];
          while (!chaos.stopped() && Date.now() < stormEnd) {
            if (order.length === 0) order = shuffled(random, API_FAULT_CLASSES);
            await sim.sim.addFault(faultSpec(random, order.pop() ?? "5xx"));
            await sleep(between(p.faultEveryMs));
          }
          await readFaults();
          await sim.sim.clearFaults();
          await sleep(between(p.calmMs));
        }
      })(),
    );
    const outageLoop = guarded(
      "outage",
      (async () => {
        while (!chaos.stopped()) {
          await sleep(between(p.outageEveryMs));
          if (chaos.stopped()) break;
          const mode = pick(random, SINK_OUTAGE_MODES);
          outages[mode] += 1;
          outage.mode = mode;
          if (process.env.SOAK_VERBOSE === "1") log(`sink outage: ${mode}`);
          await sleep(between(p.outageMs));
          outage.mode = undefined;
          if (process.env.SOAK_VERBOSE === "1")
            log(`sink outage over (${receiver.requests.length} requests)`);
        }
      })(),
    );
    const sampler = new Stop();
    const sampleLoop = (async () => {
      while (!sampler.stopped()) {
        const run = current;
        if (alive(run)) {
          const rss = await residentBytes(run.child.pid);
          const metrics = run.metricsUrl === undefined ? undefined : await scrape(run.metricsUrl);
          memory.push({
            t: (Date.now() - t0) / 1000,
            run: run.n,
            ...(rss === undefined ? {} : { rss }),
            ...(metrics?.heapUsed === undefined ? {} : { heap: metrics.heapUsed }),
          });
          if (metrics !== undefined) lastRetries.set(run.n, metrics.retries);
        }
        await sleep(500);
      }
    })();

    const finishRun = async (run: DaemonRun, firstRequest: number) => {
      const exit = await run.exited;
      const ms = Date.now() - run.spawnedAtMs;
      const peak = Math.max(0, ...memory.filter((m) => m.run === run.n).map((m) => m.rss ?? 0));
      const retries = lastRetries.get(run.n) ?? {};
      for (const [reason, count] of Object.entries(retries)) {
        retriesSeen[reason] = (retriesSeen[reason] ?? 0) + count;
      }
      runInfo.push({
        n: run.n,
        firstRequest,
        endRequest: receiver.requests.length,
        ms,
        ending:
          exit.signal === "SIGKILL" ? "SIGKILL" : exit.signal === "SIGTERM" ? "SIGTERM" : "exit",
        exit: `${String(exit.code)} ${String(exit.signal)}`,
        peakRss: peak,
      });
      return exit;
    };

    // Runs killed at random moments; one long run in the middle, left alone.
    const soakEnd = t0 + p.seconds * 1000;
    const longAt = t0 + (p.seconds * 1000) / 3;
    let longDone = false;
    let firstRequest = 0;
    let run = first;
    for (let n = 1; ; n++) {
      const long = !longDone && Date.now() >= longAt;
      const lengthMs = long ? Math.max(20_000, (p.seconds * 1000) / 3) : between(p.runMs);
      if (long) {
        longDone = true;
        log(`run ${n}: the long run (${(lengthMs / 1000).toFixed(0)} s)`);
      }
      // Some runs end at a webhook 2xx rather than at a random moment (given more time for one
      // to come).
      killArmed.on = !long && random() < 0.4;
      const deadline = Math.min(
        run.spawnedAtMs + (killArmed.on ? 2 * lengthMs : lengthMs),
        soakEnd,
      );
      while (
        Date.now() < deadline &&
        run.child.exitCode === null &&
        run.child.signalCode === null
      ) {
        await sleep(Math.min(100, deadline - Date.now()));
      }
      killArmed.on = false;
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill("SIGKILL");
      const exit = await finishRun(run, firstRequest);
      if (exit.signal !== "SIGKILL") {
        problems.push(
          `run ${n} ended by itself (${String(exit.code)}): ${run.text().slice(-2000)}`,
        );
      }
      if (Date.now() >= soakEnd) break;
      await sleep(between(p.downMs));
      firstRequest = receiver.requests.length;
      run = spawnRun(n + 1, CLI, configFile, env);
      runs.push(run);
      current = run;
      if (n % 10 === 0) log(`${n} runs, ${receiver.requests.length} webhook requests`);
    }

    // The end: no more faults, a healthy sink, the clock frozen; one last run catches up.
    chaos.stop();
    await Promise.all([faultLoop, outageLoop]);
    outage.mode = undefined;
    await readFaults();
    await sim.sim.clearFaults();
    await stopClock();
    log(`faults stopped after ${runs.length} runs; the last run catches up`);
    const truth = new Map<string, { arrivals: Arrivals; failures: string[] }>();
    for (const id of projectIds) {
      const ends = await truthEnds(sim, id, since);
      truth.set(id, {
        arrivals: ends.arrivals,
        failures: ends.failures.map((f) => `${f.operationId} ${f.status}`),
      });
    }

    const lastFirstRequest = receiver.requests.length;
    const last = spawnRun(runs.length + 1, CLI, configFile, env);
    runs.push(last);
    current = last;
    const expectedFailures = new Set([...truth.values()].flatMap((t) => t.failures));
    const delivered = () => deliveredAlerts(receiver.requests, (r) => is2xx(answers[r.index]));
    const posted = () => postedFailures(alertmanager.requests, amAnswers);
    const deadline = Date.now() + p.finalMs;
    let caughtUp = false;
    while (Date.now() < deadline && last.child.exitCode === null) {
      const states = await readStateFiles(stateDir);
      const counted = projectIds.every(
        (id) =>
          diffArrivals(id, committedArrivals(states.get(id)), truth.get(id)?.arrivals ?? {})
            .length === 0 && states.get(id)?.segment === null,
      );
      const outboxEmpty = [...states.values()].every((s) => s.outbox.length === 0);
      const got = delivered().failures;
      const gotAm = posted();
      if (
        counted &&
        outboxEmpty &&
        [...expectedFailures].every((f) => got.has(f) && gotAm.has(f))
      ) {
        caughtUp = true;
        break;
      }
      await sleep(250);
    }
    const catchUpSeconds = (Date.now() - last.spawnedAtMs) / 1000;
    await sleep(2000);
    last.child.kill("SIGTERM");
    const lastExit = await finishRun(last, lastFirstRequest);
    sampler.stop();
    await sampleLoop;
    if (lastExit.code !== 0) problems.push(`the last run did not stop cleanly: ${lastExit.code}`);
    if (!caughtUp) {
      problems.push(`the last run did not catch up within ${p.finalMs / 1000} s`);
      // What it said about it: its last warnings and errors.
      const said = last.logs.filter((l) => l.level === "warn" || l.level === "error");
      problems.push(...said.slice(-5).map((l) => `  the last run logged: ${JSON.stringify(l)}`));
    }

    // Checks.
    const states = await readStateFiles(stateDir);
    const diffs = projectIds.flatMap((id) =>
      diffArrivals(id, committedArrivals(states.get(id)), truth.get(id)?.arrivals ?? {}),
    );
    problems.push(...diffs.map((d) => `arrivals differ from the truth: ${d}`));
    const got = delivered();
    const missing = [...expectedFailures].filter((f) => !got.failures.has(f));
    const unexpected = [...got.failures.keys()].filter((f) => !expectedFailures.has(f));
    problems.push(...missing.map((f) => `failure alert never delivered: ${f}`));
    problems.push(...unexpected.map((f) => `failure alert for no failure of the truth: ${f}`));
    // The Alertmanager sink: every failure posted (as firing or resolved), and nothing else.
    const gotAm = posted();
    problems.push(
      ...[...expectedFailures]
        .filter((f) => !gotAm.has(f))
        .map((f) => `failure never posted to Alertmanager: ${f}`),
      ...[...gotAm]
        .filter((f) => !expectedFailures.has(f))
        .map((f) => `Alertmanager alert for no failure of the truth: ${f}`),
    );
    // Duplicates: each must have been first delivered by the last 2xx of a killed run.
    const lastTwoxxOfKilled = new Set<number>();
    for (const r of runInfo) {
      if (r.ending !== "SIGKILL") continue;
      for (let i = r.endRequest - 1; i >= r.firstRequest; i--) {
        if (is2xx(answers[i])) {
          lastTwoxxOfKilled.add(i);
          break;
        }
      }
    }
    for (const [id, requests] of got.deliveries) {
      if (requests.length < 2) continue;
      const firstIndex = requests[0]?.index ?? -1;
      if (!lastTwoxxOfKilled.has(firstIndex)) {
        problems.push(`alert ${id} delivered ${requests.length} times, first not at a kill`);
      }
    }
    // The log: every fault class handled, no unexpected error.
    const notable = runs.flatMap((r) => r.logs);
    const failureLines = notable.filter((l) => l.level === "warn" || l.level === "error");
    const evidence = Object.fromEntries(
      API_FAULT_CLASSES.map((c) => [c, failureLines.filter(EVIDENCE[c]).length]),
    ) as Record<ApiFaultClass, number>;
    let mildLatency = 0;
    for (const f of faultsFired.values()) {
      if (f.mild) mildLatency += f.fired;
      else faultCounts[f.cls] += f.fired;
    }
    // A fault the client's retries absorbed leaves no log line, only its retry counter.
    const retried = Object.fromEntries(
      API_FAULT_CLASSES.map((c) => [
        c,
        Object.entries(retriesSeen)
          .filter(([reason]) => retryReasonMatches(c, reason))
          .reduce((n, [, count]) => n + count, 0),
      ]),
    ) as Record<ApiFaultClass, number>;
    // A class that hit only a few requests may have hit them all in runs killed before their
    // next /metrics reading, and been absorbed by retries: it must show from 10 hits on (an
    // overlap from more, see LEAST_HITS_SHOWN).
    for (const c of API_FAULT_CLASSES) {
      if (faultCounts[c] >= LEAST_HITS_SHOWN[c] && evidence[c] === 0 && retried[c] === 0) {
        problems.push(
          `fault class ${c} was injected ${faultCounts[c]} times but shows in no log line and no retry`,
        );
      }
    }
    const sinkEvidence = notable.filter(
      (l) => l.msg === "alert delivery failed; will retry",
    ).length;
    if (Object.values(outageRequests).some((n) => n > 0) && sinkEvidence === 0) {
      problems.push("the sink's outages show in no log line");
    }
    const unexpectedErrors = notable.filter(
      (l) => (l.level === "error" || l.level === "fatal") && !EXPECTED_ERRORS.has(l.msg ?? ""),
    );
    problems.push(...unexpectedErrors.map((l) => `unexpected error logged: ${JSON.stringify(l)}`));
    const started = runs.reduce((n, r) => n + (r.messages.get("exporter started") ?? 0), 0);
    // Output that is not a log line: a crash, or a warning of the runtime (such as the
    // MaxListenersExceededWarning the scheduler's shared abort signal once caused).
    problems.push(...runs.flatMap(otherOutputProblems));

    // Memory of the long run: its end against a quarter in.
    const longRun = runInfo.reduce((a, b) => (b.ms > a.ms && b.ending === "SIGKILL" ? b : a));
    const samples = memory.filter((m) => m.run === longRun.n);
    const at = (fraction: number) => samples[Math.floor(fraction * (samples.length - 1))];
    const quarter = at(0.25);
    const end = at(1);
    const growth = {
      run: longRun.n,
      seconds: longRun.ms / 1000,
      rssQuarter: quarter?.rss ?? NaN,
      rssEnd: end?.rss ?? NaN,
      heapQuarter: quarter?.heap ?? NaN,
      heapEnd: end?.heap ?? NaN,
    };
    // Bounded: the heap at the end within 1.5x (plus 16 MiB) of a quarter in.
    if (growth.heapEnd > 1.5 * growth.heapQuarter + 16 * 1024 * 1024) {
      problems.push(
        `the long run's heap grew from ${growth.heapQuarter} to ${growth.heapEnd} bytes`,
      );
    }

    let duplicates = 0;
    let duplicateAlerts = 0;
    for (const requests of got.deliveries.values()) {
      if (requests.length > 1) {
        duplicates += requests.length - 1;
        duplicateAlerts += 1;
      }
    }
    const results: SoakResults = {
      startedAt: new Date(t0).toISOString(),
      seconds: (Date.now() - t0) / 1000,
      seed,
      projects: projectIds.length,
      runs: runs.length,
      kills: runInfo.filter((r) => r.ending === "SIGKILL").length,
      killsAtA2xx: killArmed.fired,
      runsStarted: started,
      runSeconds: {
        min: Math.min(...runInfo.map((r) => r.ms / 1000)),
        max: Math.max(...runInfo.map((r) => r.ms / 1000)),
      },
      faults: faultCounts,
      faultEvidence: evidence,
      mildLatencyHits: mildLatency,
      faultRetries: retried,
      retriesByReason: retriesSeen,
      sinkOutages: outages,
      sinkOutageRequests: outageRequests,
      sinkFailuresLogged: sinkEvidence,
      webhookRequests: receiver.requests.length,
      alertmanagerRequests: alertmanager.requests.length,
      failuresPostedToAlertmanager: gotAm.size,
      arrivals: [...truth.values()].reduce(
        (n, t) => n + Object.values(t.arrivals).reduce((a, b) => a + b, 0),
        0,
      ),
      arrivalDifferences: diffs.length,
      failures: expectedFailures.size,
      failureAlertsDelivered: got.failures.size,
      otherAlertsDelivered: got.other,
      duplicateDeliveries: duplicates,
      duplicateAlerts,
      missingAlerts: missing.length,
      catchUpSeconds,
      memory: {
        peakRss: Math.max(...runInfo.map((r) => r.peakRss)),
        // The runs' peaks early and late in the soak: a leak across restarts would show here.
        peakRssFirstThird: Math.max(
          0,
          ...runInfo.slice(0, Math.ceil(runInfo.length / 3)).map((r) => r.peakRss),
        ),
        peakRssLastThird: Math.max(
          0,
          ...runInfo.slice(-Math.ceil(runInfo.length / 3)).map((r) => r.peakRss),
        ),
        longRun: growth,
      },
      problems,
    };
    await writeJson(out, results);
    process.stdout.write(soakReport(results));
    log(problems.length === 0 ? "soak passed" : `soak FAILED: ${problems.length} problems`);
    for (const problem of problems.slice(0, 50)) process.stderr.write(`  - ${problem}\n`);
    process.exitCode = problems.length === 0 ? 0 : 1;
  } finally {
    for (const r of runs)
      if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill("SIGKILL");
    await receiver.close();
    await alertmanager.close();
    await sim.close();
    await removeDir(dir);
  }
}

/** From the Alertmanager receiver's requests answered 2xx: the failures posted (`op status`). */
function postedFailures(
  requests: readonly { index: number; json: unknown }[],
  answers: readonly (number | "drop")[],
): Set<string> {
  const failures = new Set<string>();
  for (const request of requests) {
    if (!is2xx(answers[request.index])) continue;
    const alerts = request.json as { labels: Record<string, string> }[] | undefined;
    for (const { labels } of alerts ?? []) {
      if (labels.alertname === "PgcpOperationFailed") {
        failures.add(`${labels.operation_id ?? ""} ${labels.status ?? ""}`);
      }
    }
  }
  return failures;
}

function is2xx(answer: number | "drop" | undefined): boolean {
  return typeof answer === "number" && answer >= 200 && answer <= 299;
}

await main();
