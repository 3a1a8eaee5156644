import type { AddressInfo } from "node:net";
import { API_BASE_PATH, RESOURCE_ID_PATTERN } from "../contract/index.js";
import { createClock, type ClockMode } from "./clock.js";
import { apiRouter } from "./http/api-routes.js";
import { FaultRegistry } from "./http/faults.js";
import { RateLimiter, REAL_API_RATE_LIMIT } from "./http/rate-limiter.js";
import { StreamTracker } from "./http/respond.js";
import { createSimulatorServer } from "./http/server.js";
import { simRouter } from "./http/sim-routes.js";
import { RequestStats } from "./http/stats.js";
import { IdFactory } from "./ids.js";
import type { BulkSeedOptions, BulkSeedResult } from "./model/bulk-seed.js";
import { DEFAULT_USER_ID, keyOwnerOf, type Organization } from "./model/accounts.js";
import { ControlPlane } from "./model/control-plane.js";
import {
  DEFAULT_MANUAL_START,
  REAL_CLOCK_TICK_MS,
  DEFAULT_AVAILABILITY_CHECK_SECONDS,
  type SimulatorOptions,
} from "./options.js";
import { randomSeed, SeededRandom } from "./random.js";
import { Scheduler } from "./scheduler.js";
import { US_PER_MS, dateToMicros, microsToDate, secondsToMicros } from "./time.js";
import { TrafficGenerator } from "./traffic/generator.js";
import { resolveTrafficOptions } from "./traffic/options.js";
import type { ComputeHost, ComputeHostDeps, ComputeHostOptions } from "./computes/index.js";
import type { SimComputeRequest } from "./http/sim-schemas.js";
import type { SimComputeView } from "./sim-api.js";

export interface RunningSimulator {
  /** `http://host:port` */
  readonly url: string;
  /** `url` + `/api/v2`: the base URL clients use. */
  readonly apiUrl: string;
  readonly port: number;
  /** The seed in use (the given one, or the random one picked), to replay a run. */
  readonly seed: number;
  readonly apiKey: string;
  /** The organisations created at start (`SimulatorOptions.organizations`), with their ids. */
  readonly organizations: readonly Organization[];
  /** The simulated control plane, for in-process inspection. Tests should drive it over HTTP. */
  readonly plane: ControlPlane;
  readonly clockMode: ClockMode;
  /** The current simulated time. */
  now(): Date;
  /** Moves a manual clock forward and applies every event due meanwhile (real clock: throws). */
  advance(seconds: number): void;
  /** Creates many projects with finished histories at once (see `POST /_sim/bulk`). */
  seedBulk(options: BulkSeedOptions): BulkSeedResult;
  /** The ids of the projects the traffic keeps busy, most active first (none without it). */
  trafficProjects(): readonly string[];
  /** Applies every simulated event due now (requests do this by themselves). */
  settle(): void;
  /** Answers still being streamed by a `drip` or `oversized` fault (in-process inspection). */
  streamingAnswers(): number;
  /**
   * With `computes`: the port every endpoint's loopback address (its `host`) listens on;
   * undefined without.
   */
  readonly computePort: number | undefined;
  /** An endpoint's hosted compute (`GET /_sim/endpoints/{id}/compute`); throws without computes. */
  compute(endpointId: string): SimComputeView;
  /** Applies settings to an endpoint's compute (`POST /_sim/endpoints/{id}/compute`). */
  configureCompute(endpointId: string, request: SimComputeRequest): Promise<SimComputeView>;
  /**
   * Looks at the computes' sessions (activity) and writes every compute's numbers now; the
   * host does both every 200 ms by itself. Resolves at once without computes.
   */
  syncComputes(): Promise<void>;
  /** Stops the server, its timers and its open connections (dripping answers included). */
  close(): Promise<void>;
}

function allKeys(options: SimulatorOptions): string[] {
  return [
    ...(options.organizations ?? []).flatMap((o) => o.apiKeys ?? []),
    ...(options.apiKeys ?? []).map((k) => k.key),
  ];
}

/** Refuses options naming ids the API could not show, or keys for unknown organisations. */
function checkAccountOptions(options: SimulatorOptions): void {
  const orgIds = new Set<string>();
  const checkId = (what: string, id: string): void => {
    if (!RESOURCE_ID_PATTERN.test(id))
      throw new RangeError(`${what} ${id} must match ^[a-z0-9-]{1,60}$`);
  };
  for (const org of options.organizations ?? []) {
    if (org.id !== undefined) {
      checkId("organization id", org.id);
      orgIds.add(org.id);
    }
    for (const user of org.members ?? []) checkId("user id", user);
  }
  for (const spec of options.apiKeys ?? []) {
    if ("user" in spec) checkId("user id", spec.user);
    else if (!orgIds.has(spec.org)) {
      throw new RangeError(
        `apiKeys: organization ${spec.org} is not among the organizations (give it an id)`,
      );
    }
  }
}

/** Registers the main key (the default user's), the organisations and the further keys. */
function addAccounts(plane: ControlPlane, options: SimulatorOptions): Organization[] {
  plane.accounts.addKey(options.apiKey, { kind: "user", userId: DEFAULT_USER_ID });
  const organizations = (options.organizations ?? []).map((spec) => {
    const org = plane.createOrganization(spec);
    for (const key of spec.apiKeys ?? [])
      plane.accounts.addKey(key, { kind: "org", orgId: org.id });
    return org;
  });
  for (const spec of options.apiKeys ?? []) plane.accounts.addKey(spec.key, keyOwnerOf(spec));
  return organizations;
}

/** Seeded streams, by purpose: fixed numbers so the same seed gives the same run. */
const STREAM = { plane: 1, traffic: 2, faults: 3, requestIds: 4 } as const;

export async function startSimulator(options: SimulatorOptions): Promise<RunningSimulator> {
  for (const key of [options.apiKey, ...allKeys(options)]) {
    if (key.trim() === "") throw new RangeError("API keys must not be empty");
  }
  checkAccountOptions(options);
  if (!((options.availabilityCheckSeconds ?? 0) >= 0)) {
    throw new RangeError("availabilityCheckSeconds must be 0 (off) or a positive number");
  }
  const seed = options.seed ?? randomSeed();
  const root = new SeededRandom(seed);
  const streams = {
    plane: root.fork(STREAM.plane),
    traffic: root.fork(STREAM.traffic),
    faults: root.fork(STREAM.faults),
    requestIds: root.fork(STREAM.requestIds),
  };
  const traffic =
    options.traffic === undefined || options.traffic === false
      ? undefined
      : resolveTrafficOptions(options.traffic);
  const startTime =
    options.startTime ?? (options.clock === "manual" ? DEFAULT_MANUAL_START : new Date());
  const clock = createClock(options.clock, dateToMicros(startTime), Date.now, options.speed);
  // A fleet with a history starts that long ago; the first settle brings it to the start time.
  const scheduler = new Scheduler(clock.targetUs() - secondsToMicros(traffic?.historySeconds ?? 0));
  const settle = (): void => {
    scheduler.runUntil(clock.targetUs());
  };
  // Before the plane: `misdated` and `failed_operations` faults hit operations in the model.
  const faults = new FaultRegistry(streams.faults);
  const plane = new ControlPlane({
    scheduler,
    random: streams.plane,
    availabilityCheckSeconds:
      options.availabilityCheckSeconds ?? DEFAULT_AVAILABILITY_CHECK_SECONDS,
    misdate: () => faults.misdateOffsetUs(),
    failOperation: (operation) => faults.operationFailure(operation),
  });
  const organizations = addAccounts(plane, options);
  // Before any endpoint is created: each gets its compute's listener as it comes.
  const computes =
    options.computes === undefined
      ? undefined
      : await startComputes(options.computes, { plane, settle });
  const orgProjects = organizations.flatMap((org, i) =>
    Array.from({ length: options.organizations?.[i]?.projects ?? 0 }, () =>
      plane.createProject({
        plan: "paid",
        branches: 1,
        generated: traffic !== undefined,
        ownership: { ownerId: org.id, orgId: org.id },
      }),
    ),
  );
  let generator: TrafficGenerator | undefined;
  if (traffic !== undefined) {
    const trafficRandom =
      traffic.seed === undefined ? streams.traffic : new SeededRandom(traffic.seed);
    generator = new TrafficGenerator(plane, traffic, trafficRandom);
    generator.start(orgProjects);
  }
  settle();

  const stats = new RequestStats();
  const openStreams = new StreamTracker();
  const requestIds = new IdFactory(streams.requestIds);
  const rateLimit = options.rateLimit ?? REAL_API_RATE_LIMIT;
  const server = createSimulatorServer({
    ownerOf: (key) => plane.accounts.ownerOf(key),
    api: apiRouter(plane),
    sim: simRouter({
      plane,
      clock,
      settle,
      faults,
      stats,
      trafficProjects: () => generator?.projectsByActivity() ?? [],
      computes,
    }),
    settle,
    nowMs: () => clock.targetUs() / US_PER_MS,
    rateLimiter: rateLimit === false ? undefined : new RateLimiter(rateLimit),
    faults,
    stats,
    streams: openStreams,
    newRequestId: () => requestIds.uuid(),
  });

  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  }).catch(async (error: unknown) => {
    await computes?.close();
    throw error;
  });
  const ticker =
    clock.mode === "real" ? setInterval(settle, REAL_CLOCK_TICK_MS).unref() : undefined;
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;

  return {
    url,
    apiUrl: url + API_BASE_PATH,
    port,
    seed,
    apiKey: options.apiKey,
    organizations,
    plane,
    clockMode: clock.mode,
    now: () => microsToDate(scheduler.nowUs),
    advance: (seconds) => {
      clock.advance(seconds);
      settle();
    },
    seedBulk: (bulk) => plane.seedBulk(bulk),
    settle,
    trafficProjects: () => generator?.projectsByActivity() ?? [],
    streamingAnswers: () => openStreams.size,
    computePort: computes?.port,
    compute: (endpointId) => requireComputes(computes).view(endpointId),
    configureCompute: (endpointId, request) =>
      requireComputes(computes).configure(endpointId, request),
    syncComputes: async () => {
      await computes?.sync();
    },
    close: async () => {
      await computes?.close();
      await new Promise<void>((resolve, reject) => {
        clearInterval(ticker);
        server.close((error) => {
          if (error === undefined) resolve();
          else reject(error);
        });
        openStreams.destroyAll();
        server.closeAllConnections();
      });
    },
  };
}

/** The compute host, loaded only when computes are asked for (it brings the pg driver). */
async function startComputes(
  options: ComputeHostOptions,
  deps: ComputeHostDeps,
): Promise<ComputeHost> {
  const { ComputeHost } = await import("./computes/index.js");
  return ComputeHost.start(options, deps);
}

function requireComputes(computes: ComputeHost | undefined): ComputeHost {
  if (computes === undefined) {
    throw new Error("the simulator hosts no computes: start it with the computes option");
  }
  return computes;
}
