/**
 * The compute monitor: looks at every listed endpoint of the watched projects once a second
 * (and at once when a listing arrives), asks the rule (`rule.ts`) whether each may be read now,
 * reads those that may (`reading.ts`; at most `concurrency` at once, one at a time per
 * endpoint), and reports what it found through the daemon's observers. It raises a
 * `compute_advice` alert when the advice (`advice.ts`) turns on for a reason, once per
 * compute start.
 *
 * It hears the daemon's listings itself (it is one of its observers), noting when each arrived
 * on the monotonic clock: how fresh a listing is decides whether a compute may be read. An
 * endpoint with an operation under way (the committed state follows it) is left alone until the
 * operation ends: a suspend may have begun since the listing.
 */
import { adviceAlert } from "../alerts/index.js";
import type { Clock } from "../clock.js";
import type { ComputeConnection } from "../config/index.js";
import { effectiveSuspendSeconds, maxConnectionsFor, type Endpoint } from "../contract/index.js";
import type { Logger } from "../logger.js";
import type { Alert } from "../store/index.js";
import type {
  AdviceReason,
  ComputeView,
  DaemonObserver,
  ProbeFailure,
  ProbeOutcome,
} from "../sync/index.js";
import { advise, type AdviceSettings, type AdviceTrack } from "./advice.js";
import {
  probeCompute,
  type ProbeFailed,
  type RawReading,
  type SessionsReading,
} from "./reading.js";
import {
  afterFailure,
  afterReading,
  listed,
  mayProbe,
  type ListingFacts,
  type ProbeTrack,
  type RuleSettings,
} from "./rule.js";

/** What the monitor runs with; a reload replaces it whole. */
export interface MonitorSettings {
  /** Each account's connection; an account without one (or not in it) is not probed. */
  readonly connections: ReadonlyMap<string, ComputeConnection | undefined>;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly concurrency: number;
  readonly ignoreUsers: readonly string[];
  readonly ignoreApplications: readonly string[];
  readonly advice: AdviceSettings;
}

export interface MonitorInputs {
  readonly settings: MonitorSettings;
  /** The account a watched project is polled under. */
  readonly accountOf: (projectId: string) => string | undefined;
  /**
   * The endpoints of a project with an operation under way (a start, a suspend, a change): one
   * may be stopping whatever its listing says, so it is not connected to until the operation
   * ends.
   */
  readonly busyEndpoints?: (projectId: string) => ReadonlySet<string>;
  /** Hears what changed (the daemon's observers). */
  readonly report: Pick<Required<DaemonObserver>, "computeChanged" | "computeForgotten">;
  /** Raises an alert of the project outside its polls (to the sinks that take it). */
  readonly raise: (projectId: string, alert: Alert) => Promise<void>;
  readonly logger: Logger;
  readonly clock: Clock;
  /** How often the endpoints are looked at; default 1 s. */
  readonly tickMs?: number;
}

/** What the monitor keeps of one endpoint. */
interface Watched {
  track: ProbeTrack;
  view: ComputeView;
  advice: AdviceTrack | undefined;
  /**
   * The server's clock at the previous reading of this start (s): others' activity counts after it.
   */
  sinceS: number | undefined;
  /** The advice reasons already raised as alerts, by compute start. */
  raised: Set<string>;
  inFlight: boolean;
  /** Counts the compute's starts and stops as the listings show them. */
  generation: number;
}

interface Project {
  endpoints: readonly Endpoint[];
  /** When the latest listing arrived (monotonic ms). */
  listedAtMs: number;
  readonly computes: Map<string, Watched>;
}

export class ComputeMonitor implements Pick<
  Required<DaemonObserver>,
  "projectsChanged" | "endpointsListed"
> {
  readonly #projects = new Map<string, Project>();
  readonly #inputs: MonitorInputs;
  #settings: MonitorSettings;
  #running = 0;
  #stopped = true;
  #wake: (() => void) | undefined;
  #loop: Promise<void> | undefined;
  readonly #inFlight = new Set<Promise<void>>();
  /** Ends the probes under way when the monitor stops. */
  #abort = new AbortController();

  constructor(inputs: MonitorInputs) {
    this.#inputs = inputs;
    this.#settings = inputs.settings;
  }

  get settings(): MonitorSettings {
    return this.#settings;
  }

  // --- what the daemon reports ------------------------------------------------------------

  projectsChanged(projectIds: readonly string[]): void {
    const watched = new Set(projectIds);
    for (const id of [...this.#projects.keys()]) {
      if (!watched.has(id)) this.#projects.delete(id);
    }
  }

  endpointsListed(projectId: string, endpoints: readonly Endpoint[]): void {
    const project = this.#projects.get(projectId);
    const listedAtMs = this.#inputs.clock.monotonic();
    if (project === undefined) {
      this.#projects.set(projectId, { endpoints, listedAtMs, computes: new Map() });
    } else {
      project.endpoints = endpoints;
      project.listedAtMs = listedAtMs;
      const listed = new Set(endpoints.map((e) => e.id));
      for (const id of [...project.computes.keys()]) {
        if (!listed.has(id)) project.computes.delete(id);
      }
    }
    // A listing may make a compute readable: look now, not at the next tick.
    this.#wake?.();
  }

  // --- running ------------------------------------------------------------------------------

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#abort = new AbortController();
    this.#loop = this.#run();
  }

  /** Stops looking, and ends the probes under way (what they found is not reported). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort();
    this.#wake?.();
    await this.#loop;
    await this.idle();
  }

  /** Resolves once no probe is under way. */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  /**
   * Runs with `settings` from now on (a reload). The computes of an account no longer probed
   * are forgotten; probes under way finish under the settings they started with.
   */
  reconfigure(settings: MonitorSettings): void {
    this.#settings = settings;
    for (const [projectId, project] of this.#projects) {
      if (this.#connectionOf(projectId) !== undefined) continue;
      for (const endpointId of project.computes.keys()) {
        this.#inputs.report.computeForgotten(projectId, endpointId);
      }
      project.computes.clear();
    }
    this.#wake?.();
  }

  async #run(): Promise<void> {
    const tickMs = this.#inputs.tickMs ?? 1000;
    while (!this.#stopped) {
      try {
        this.tick();
      } catch (error) {
        this.#inputs.logger.error({ err: error }, "the compute monitor's look failed");
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, tickMs);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
    }
  }

  /** One look at every listed endpoint: the rule's state, and the probes that may start. */
  tick(): void {
    if (this.#settings.connections.size === 0) return;
    const now = this.#inputs.clock.monotonic();
    const rule = this.#ruleSettings();
    for (const [projectId, project] of this.#projects) {
      const connection = this.#connectionOf(projectId);
      if (connection === undefined) continue;
      const busy = this.#inputs.busyEndpoints?.(projectId);
      for (const endpoint of project.endpoints) {
        const facts = factsOf(endpoint, project.listedAtMs);
        const watched = this.#watched(projectId, project, endpoint, facts);
        if (watched.inFlight || this.#running >= this.#settings.concurrency) continue;
        if (busy?.has(endpoint.id) === true) continue;
        if (!mayProbe(watched.track, facts, now, rule)) continue;
        this.#probe(projectId, project, endpoint, watched, connection);
      }
    }
  }

  #connectionOf(projectId: string): ComputeConnection | undefined {
    const account = this.#inputs.accountOf(projectId);
    return account === undefined ? undefined : this.#settings.connections.get(account);
  }

  #ruleSettings(): RuleSettings {
    const { intervalMs, timeoutMs } = this.#settings;
    return {
      intervalMs,
      freshMs: Math.max(intervalMs, 5_000),
      // Until its session is set up: the compute must not suspend while the probe connects.
      probeMs: timeoutMs + 500,
      maxBackoffMs: 16 * intervalMs,
    };
  }

  /** The endpoint's record after the latest listing, reported when its state changed. */
  #watched(projectId: string, project: Project, endpoint: Endpoint, facts: ListingFacts): Watched {
    let watched = project.computes.get(endpoint.id);
    const track = listed(watched?.track, facts);
    if (watched === undefined) {
      watched = {
        track,
        view: {
          endpointId: endpoint.id,
          state: track.state,
          reading: undefined,
          up: undefined,
          lastSuccessMs: undefined,
          failure: undefined,
          advised: [],
        },
        advice: undefined,
        sinceS: undefined,
        raised: new Set(),
        inFlight: false,
        generation: 0,
      };
      project.computes.set(endpoint.id, watched);
      this.#inputs.report.computeChanged(projectId, watched.view);
      return watched;
    }
    if (track === watched.track) return watched;
    const newStart = track.state === "waiting" && watched.track.state !== "waiting";
    watched.track = track;
    if (newStart || track.state === "idle") {
      // A reading belongs to one start: a stopped or restarted compute's numbers are gone.
      watched.generation += 1;
      watched.sinceS = undefined;
      watched.advice = undefined;
      watched.view = { ...watched.view, state: track.state, reading: undefined, advised: [] };
    } else {
      watched.view = { ...watched.view, state: track.state };
    }
    this.#inputs.report.computeChanged(projectId, watched.view);
    return watched;
  }

  #probe(
    projectId: string,
    project: Project,
    endpoint: Endpoint,
    watched: Watched,
    connection: ComputeConnection,
  ): void {
    watched.inFlight = true;
    this.#running += 1;
    const { clock } = this.#inputs;
    const startedMs = clock.monotonic();
    const settings = this.#settings;
    const generation = watched.generation;
    const done = probeCompute(
      { host: endpoint.host, connection },
      {
        timeoutMs: settings.timeoutMs,
        ignoreUsers: settings.ignoreUsers,
        ignoreApplications: settings.ignoreApplications,
      },
      this.#abort.signal,
    )
      .then((result) => {
        // Forgotten meanwhile (the endpoint deleted, the project or account no longer probed),
        // stopped or started again since (what it read is gone), or ended by a stop.
        if (this.#stopped || project.computes.get(endpoint.id) !== watched) return;
        if (watched.generation !== generation) return;
        const facts = factsOf(endpoint, project.listedAtMs);
        if (result.ok) this.#read(projectId, endpoint, watched, facts, result.reading, startedMs);
        else this.#failed(projectId, endpoint, watched, facts, result, startedMs);
      })
      .catch((error: unknown) => {
        this.#inputs.logger.error({ err: error }, "the compute probe failed unexpectedly");
      })
      .finally(() => {
        watched.inFlight = false;
        this.#running -= 1;
        this.#inFlight.delete(done);
      });
    this.#inFlight.add(done);
  }

  #read(
    projectId: string,
    endpoint: Endpoint,
    watched: Watched,
    facts: ListingFacts,
    reading: RawReading,
    startedMs: number,
  ): void {
    const { clock, logger } = this.#inputs;
    const settings = this.#settings;
    const now = clock.monotonic();
    const wall = clock.wall();
    const othersAtMs = othersActiveAt(reading, watched.sinceS, settings.intervalMs, startedMs);
    watched.track = afterReading(watched.track, facts, now, othersAtMs, this.#ruleSettings());
    watched.sinceS = reading.serverNowS;
    const uptimeMs = (reading.uptimeS ?? 0) * 1000;
    const startedAtMs = wall - uptimeMs;
    const maxConnections = maxConnectionsFor(endpoint.autoscaling_limit_min_cu);
    const start = reading.serverNowS - (reading.uptimeS ?? 0);
    const advice = advise(
      watched.advice,
      {
        atMs: now,
        // Whole seconds: the same start read twice gives the same value.
        start: Math.round(start),
        uptimeMs,
        hitRatio: reading.hitRatio,
        connections: reading.connections,
        maxConnections,
      },
      settings.advice,
    );
    watched.advice = advice.track;
    const recovered = watched.view.failure;
    watched.view = {
      endpointId: endpoint.id,
      state: watched.track.state,
      reading: {
        atMs: wall,
        startedAtMs,
        hitRatio: reading.hitRatio,
        hits: reading.hits,
        misses: reading.misses,
        used: reading.used,
        writes: reading.writes,
        connections: reading.connections,
      },
      up: true,
      lastSuccessMs: wall,
      failure: undefined,
      advised: advice.advised,
    };
    const fields = { project: projectId, endpoint: endpoint.id };
    if (recovered !== undefined) {
      logger.info(
        { ...fields, failures: recovered.count },
        "the compute probe reads the compute again",
      );
    }
    logger.debug(
      {
        ...fields,
        hitRatio: reading.hitRatio,
        connections: reading.connections,
        busy: reading.busy,
        othersActiveSecondsAgo:
          othersAtMs === undefined ? null : Math.round(startedMs - othersAtMs) / 1000,
        state: watched.track.state,
      },
      "compute read",
    );
    this.#inputs.report.computeChanged(projectId, watched.view, { ok: true });
    for (const reason of advice.advised) {
      const key = `${reason}@${Math.round(start)}`;
      if (watched.raised.has(key)) continue;
      watched.raised.add(key);
      this.#advise(projectId, endpoint, reason, reading, startedAtMs, wall, maxConnections);
    }
  }

  #advise(
    projectId: string,
    endpoint: Endpoint,
    reason: AdviceReason,
    reading: RawReading,
    startedAtMs: number,
    wall: number,
    maxConnections: number | undefined,
  ): void {
    const { advice } = this.#settings;
    const alert = adviceAlert({
      projectId,
      branchId: endpoint.branch_id,
      endpointId: endpoint.id,
      reason,
      startedAtMs,
      detectedAtMs: wall,
      hitRatio: reading.hitRatio,
      connections: reading.connections,
      maxConnections,
      minComputeUnits: endpoint.autoscaling_limit_min_cu,
      maxComputeUnits: endpoint.autoscaling_limit_max_cu,
      threshold: reason === "file_cache" ? advice.hitRatio : advice.connectionsShare,
      windowSeconds: advice.windowMs / 1000,
    });
    this.#inputs.logger.info(
      { project: projectId, endpoint: endpoint.id, reason, alert: alert.id },
      alert.advice?.summary ?? "a larger compute is advised",
    );
    this.#inputs.raise(projectId, alert).catch((error: unknown) => {
      this.#inputs.logger.warn(
        { project: projectId, endpoint: endpoint.id, err: error },
        "the compute advice could not be added to the outbox",
      );
    });
  }

  #failed(
    projectId: string,
    endpoint: Endpoint,
    watched: Watched,
    facts: ListingFacts,
    result: ProbeFailed,
    startedMs: number,
  ): void {
    const { clock, logger } = this.#inputs;
    const wall = clock.wall();
    const { sessions } = result;
    const others =
      sessions === undefined
        ? undefined
        : {
            activeAtMs: othersActiveAt(
              sessions,
              watched.sinceS,
              this.#settings.intervalMs,
              startedMs,
            ),
          };
    if (sessions !== undefined) watched.sinceS = sessions.serverNowS;
    const failed = result.session
      ? { session: true as const, ...(others === undefined ? {} : { others }) }
      : { session: false as const };
    watched.track = afterFailure(
      watched.track,
      facts,
      clock.monotonic(),
      failed,
      this.#ruleSettings(),
    );
    const previous = watched.view.failure;
    const failure: ProbeFailure = {
      reason: result.reason,
      message: result.message,
      sinceMs: previous?.sinceMs ?? wall,
      count: (previous?.count ?? 0) + 1,
    };
    watched.view = { ...watched.view, state: watched.track.state, up: false, failure };
    const fields = {
      project: projectId,
      endpoint: endpoint.id,
      reason: result.reason,
      error: result.message,
      failures: failure.count,
    };
    // Said once per run of failures, and again when the reason changes.
    if (previous === undefined || previous.reason !== result.reason) {
      logger.warn(
        fields,
        "the compute probe failed; it tries again later, never into an idle compute",
      );
    } else {
      logger.debug(fields, "the compute probe failed again");
    }
    const outcome: ProbeOutcome = { ok: false, reason: result.reason };
    this.#inputs.report.computeChanged(projectId, watched.view, outcome);
  }
}

/** What the rule reads of an endpoint's listing. */
export function factsOf(endpoint: Endpoint, listedAtMs: number): ListingFacts {
  const delay = effectiveSuspendSeconds(endpoint.suspend_timeout_seconds);
  const pending = endpoint.pending_state;
  return {
    active:
      endpoint.current_state === "active" &&
      (pending === undefined || pending === "active") &&
      !endpoint.disabled,
    startedAt: endpoint.started_at,
    suspendDelayMs: delay === null ? null : delay * 1000,
    listedAtMs,
  };
}

/**
 * The latest activity of others a reading saw since the previous one, on the monotonic clock:
 * now when a session is busy, else the latest state change of an idle session if it is later
 * than the previous reading (one interval back for the first). Measured back from when the
 * probe started, so that the compute is never taken to be up longer than it is.
 */
export function othersActiveAt(
  reading: SessionsReading,
  previousS: number | undefined,
  intervalMs: number,
  probeStartedMs: number,
): number | undefined {
  const sinceS = previousS ?? reading.serverNowS - intervalMs / 1000;
  let atS: number | undefined;
  if (reading.busy > 0) atS = reading.serverNowS;
  else if (reading.lastIdleChangeS !== undefined && reading.lastIdleChangeS > sinceS) {
    atS = reading.lastIdleChangeS;
  }
  if (atS === undefined) return undefined;
  return probeStartedMs - Math.max(0, reading.serverNowS - atS) * 1000;
}
