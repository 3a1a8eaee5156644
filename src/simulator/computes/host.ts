import { randomBytes } from "node:crypto";
import net, { type AddressInfo, type Server, type Socket } from "node:net";
import pg from "pg";
import { conflict, notFound } from "../errors.js";
import type { ControlPlane } from "../model/control-plane.js";
import type { ComputeEvents, EndpointState } from "../model/state.js";
import type { SimComputeRequest } from "../http/sim-schemas.js";
import type { SimComputeView } from "../sim-api.js";
import { microsToDate, toIsoSeconds } from "../time.js";
import { ActivityMonitor } from "./activity.js";
import { loopbackAddress } from "./addresses.js";
import { Catalog, prepareServer, withDatabase, type ComputeRow } from "./catalog.js";
import {
  DEFAULT_WORKING_SET_BYTES,
  FileCacheRun,
  fileCacheBytes,
  modelHitRatio,
  READS_PER_CU_SECOND,
  type FileCacheCounters,
  type FileCacheLoad,
} from "./file-cache.js";
import type { ExtensionMode } from "./modes.js";
import {
  DEFAULT_COMPUTE_DATABASE,
  SIMULATOR_APPLICATION_NAME,
  type ComputeHostOptions,
} from "./options.js";
import { encodeStartup, errorResponse, readFirstMessage, withSettings } from "./wire.js";

/** How often the host looks at its sessions' activity and writes their computes' numbers. */
const TICK_MS = 200;
/** A client that sends no startup message within this is dropped. */
const STARTUP_TIMEOUT_MS = 10_000;
/** A session waiting for its compute to start gives up after this (wall clock). */
const WAKE_TIMEOUT_MS = 300_000;
/** After a stop has ended its backends, sessions still open are closed after this. */
const STOP_GRACE_MS = 1000;
/** Addresses tried for one endpoint when its address:port is taken by someone else. */
const ADDRESS_ATTEMPTS = 16;

/** What the host needs of the simulator. */
export interface ComputeHostDeps {
  readonly plane: ControlPlane;
  /** Applies every simulated event due now. */
  settle(): void;
}

interface ComputeSettings {
  hitRatio: number | undefined;
  workingSetBytes: number;
  extension: ExtensionMode;
  hang: boolean;
}

interface HostedCompute {
  readonly endpoint: EndpointState;
  /** Names its schema on the server; its first address has the same number. */
  readonly number: number;
  /** Its loopback address (see addresses.ts). */
  address: string;
  listener: Server | undefined;
  readonly sessions: Set<Session>;
  readonly settings: ComputeSettings;
  readonly monitor: ActivityMonitor;
  /** The statistics since the last start; undefined before the first. */
  run: FileCacheRun | undefined;
  /** Its schema on the server, created on the first session or setting. */
  prepared: Promise<void> | undefined;
  /** Its row changed since it was last written. */
  dirty: boolean;
  /** Sessions waiting for the compute to run, checked on every change and tick. */
  readonly waiters: Set<() => void>;
}

interface Session {
  /** Its number, unique in the host (its port's row in `client_ports` carries it). */
  readonly number: number;
  readonly compute: HostedCompute;
  readonly client: Socket;
  upstream: Socket | undefined;
  /** The upstream socket's local port: the server's `client_port` of the session. */
  port: number | undefined;
  closed: boolean;
}

class SessionClosed extends Error {}

/** A refusal the client is told about (an ErrorResponse) before its connection is closed. */
class Refusal extends Error {
  constructor(
    readonly sqlState: string,
    message: string,
  ) {
    super(message);
  }
}

/** Where clients' sessions go: the server of `postgresUrl`, over TCP. */
function upstreamOf(postgresUrl: string): { host: string; port: number } {
  let url: URL;
  try {
    url = new URL(postgresUrl);
  } catch {
    throw new RangeError("computes.postgresUrl is not a URL");
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new RangeError("computes.postgresUrl must be a postgres:// URL");
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (host === "" || url.searchParams.has("host")) {
    throw new RangeError(
      "computes.postgresUrl must name the server's TCP host and port (sessions are told apart by their client port)",
    );
  }
  return { host, port: url.port === "" ? 5432 : Number(url.port) };
}

/**
 * The simulator's computes, backed by a real PostgreSQL server. Each live endpoint gets a
 * listener on a loopback address of its own, on one port shared by all; its `host` is that
 * address. A client's connection is a proxied session: the host reads its startup message,
 * wakes an idle compute and holds the session until the compute runs (a disabled endpoint
 * refuses), then forwards it to the server, with the endpoint's schema first in its
 * `search_path` (see catalog.ts). The host watches the sessions' backends for activity (see
 * activity.ts), ends them when the compute stops, and keeps each compute's file cache
 * statistics (file-cache.ts) in the server for the endpoint's `neon_stat_file_cache`.
 */
export class ComputeHost implements ComputeEvents {
  private readonly computes = new Map<string, HostedCompute>();
  /** Live sessions by their upstream local port. */
  private readonly ports = new Map<number, Session>();
  /** Ended sessions whose ports' rows are still in `client_ports`. */
  private endedPorts: { port: number; session: number }[] = [];
  private readonly refreshes = new Set<Promise<void>>();
  private nextNumber = 1;
  private nextSession = 1;
  private ticker: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  /** The last write of the computes' rows (see writeRows). */
  private writes: Promise<void> = Promise.resolve();
  private closing = false;

  private constructor(
    private readonly deps: ComputeHostDeps,
    private readonly catalog: Catalog,
    private readonly pool: pg.Pool,
    private readonly upstream: { readonly host: string; readonly port: number },
    private readonly anchor: Server,
    /** The port every endpoint listens on. */
    readonly port: number,
  ) {}

  /**
   * Prepares the server (database, role, the host's schema), reserves the shared port on the
   * first loopback address, and attaches to the control plane: every endpoint, existing or
   * new, gets its listener.
   */
  static async start(options: ComputeHostOptions, deps: ComputeHostDeps): Promise<ComputeHost> {
    const upstream = upstreamOf(options.postgresUrl);
    const database = options.database ?? DEFAULT_COMPUTE_DATABASE;
    const port = options.port ?? 0;
    if (!(Number.isInteger(port) && port >= 0 && port <= 65_535)) {
      throw new RangeError("computes.port must be a port number (0: a free one)");
    }
    await prepareServer(options.postgresUrl, database, options.role);
    const pool = new pg.Pool({
      connectionString: withDatabase(options.postgresUrl, database),
      application_name: SIMULATOR_APPLICATION_NAME,
      max: 4,
    });
    pool.on("error", () => undefined);
    const catalog = new Catalog(pool, `pgcp_sim_${randomBytes(4).toString("hex")}`);
    let anchor: Server | undefined;
    try {
      await catalog.create();
      // The first address holds the port while no endpoint does; it answers nothing.
      anchor = net.createServer((socket) => socket.destroy());
      await listen(anchor, loopbackAddress(0), port);
    } catch (error) {
      anchor?.close();
      await catalog.dropAll([]).catch(() => undefined);
      await pool.end().catch(() => undefined);
      throw error;
    }
    const host = new ComputeHost(
      deps,
      catalog,
      pool,
      upstream,
      anchor,
      (anchor.address() as AddressInfo).port,
    );
    deps.plane.attachComputes(host);
    host.ticker = setInterval(() => {
      void host.tick(false);
    }, TICK_MS).unref();
    return host;
  }

  // --- what the model tells the host ------------------------------------------------------

  created(endpoint: EndpointState): void {
    if (this.closing || this.computes.has(endpoint.id)) return;
    const number = this.nextNumber++;
    const compute: HostedCompute = {
      endpoint,
      number,
      address: loopbackAddress(number),
      listener: undefined,
      sessions: new Set(),
      settings: {
        hitRatio: undefined,
        workingSetBytes: DEFAULT_WORKING_SET_BYTES,
        extension: "installed",
        hang: false,
      },
      monitor: new ActivityMonitor(),
      run: undefined,
      prepared: undefined,
      dirty: false,
      waiters: new Set(),
    };
    endpoint.host = compute.address;
    this.computes.set(endpoint.id, compute);
    this.track(this.openListener(compute));
  }

  started(endpoint: EndpointState): void {
    const compute = this.computes.get(endpoint.id);
    if (compute === undefined) return;
    const now = this.deps.plane.scheduler.nowUs;
    compute.run = new FileCacheRun(now, this.loadOf(compute));
    compute.monitor.reset();
    compute.dirty = true;
    // The start's own operation is still open in this call: look again once it has ended.
    setImmediate(() => {
      checkWaiters(compute);
    });
  }

  suspended(endpoint: EndpointState): void {
    const compute = this.computes.get(endpoint.id);
    if (compute === undefined) return;
    compute.run?.stop(this.deps.plane.scheduler.nowUs);
    compute.monitor.reset();
    compute.dirty = true;
    this.track(this.stopSessions(compute));
  }

  deleted(endpoint: EndpointState): void {
    const compute = this.computes.get(endpoint.id);
    if (compute === undefined) return;
    this.computes.delete(endpoint.id);
    compute.listener?.close();
    compute.listener = undefined;
    checkWaiters(compute);
    const prepared = compute.prepared;
    this.track(
      this.stopSessions(compute).then(async () => {
        if (prepared === undefined) return;
        await prepared.catch(() => undefined);
        await this.catalog.dropEndpoint(compute.number, endpoint.id);
      }),
    );
  }

  busy(endpoint: EndpointState): boolean {
    return this.computes.get(endpoint.id)?.monitor.busy ?? false;
  }

  // --- what tests and the /_sim interface ask ---------------------------------------------

  /** The endpoint's compute as `/_sim/endpoints/{id}/compute` shows it. */
  view(endpointId: string): SimComputeView {
    this.deps.settle();
    const compute = this.computeOf(endpointId);
    const now = this.deps.plane.scheduler.nowUs;
    const counters = compute.run?.counters(now) ?? EMPTY_COUNTERS;
    const endpoint = compute.endpoint;
    const load = this.loadOf(compute);
    return {
      endpoint_id: endpoint.id,
      host: compute.address,
      port: this.port,
      current_state: endpoint.currentState,
      extension: compute.settings.extension,
      hang: compute.settings.hang,
      hit_ratio: load.hitRatio,
      hit_ratio_set: compute.settings.hitRatio !== undefined,
      working_set_bytes: compute.settings.workingSetBytes,
      file_cache_bytes: fileCacheBytes(endpoint.minCu),
      reads_per_second: load.readsPerSecond,
      ...(endpoint.startedAtUs === undefined
        ? {}
        : { started_at: toIsoSeconds(endpoint.startedAtUs) }),
      file_cache: {
        file_cache_misses: counters.misses,
        file_cache_hits: counters.hits,
        file_cache_used: counters.used,
        file_cache_writes: counters.writes,
        file_cache_hit_ratio: counters.hitRatio,
      },
      sessions: [...compute.sessions].filter((s) => s.upstream !== undefined).length,
    };
  }

  /**
   * Applies a test's settings to the endpoint's compute; resolves once its sessions see
   * them. A view its sessions hold (a statement on it still running) cannot be replaced: 409.
   */
  async configure(endpointId: string, request: SimComputeRequest): Promise<SimComputeView> {
    this.deps.settle();
    const compute = this.computeOf(endpointId);
    const settings = compute.settings;
    if (request.hit_ratio !== undefined) settings.hitRatio = request.hit_ratio ?? undefined;
    if (request.working_set_bytes !== undefined) {
      settings.workingSetBytes = request.working_set_bytes;
    }
    compute.run?.change(this.deps.plane.scheduler.nowUs, this.loadOf(compute));
    if (request.hang !== undefined) settings.hang = request.hang;
    compute.dirty = true;
    const extension = request.extension;
    const wasPrepared = compute.prepared !== undefined;
    if (extension !== undefined && extension !== settings.extension) {
      const before = settings.extension;
      settings.extension = extension;
      if (wasPrepared) {
        await compute.prepared;
        try {
          await this.catalog.setExtension(compute.number, endpointId, extension);
        } catch (error) {
          settings.extension = before;
          throw conflict(
            `the view of endpoint ${endpointId} could not be replaced (${describe(error)}): its sessions hold it; retry`,
          );
        }
      }
    }
    await this.prepare(compute);
    await this.writeRows([compute]);
    return this.view(endpointId);
  }

  /** Looks at the sessions' activity and writes every compute's numbers now. */
  async sync(): Promise<void> {
    await this.tick(true);
  }

  /** Ends every session, closes the listeners and drops the host's schemas. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    clearInterval(this.ticker);
    this.deps.plane.world.computeEvents = undefined;
    await this.ticking;
    const computes = [...this.computes.values()];
    for (const compute of computes) {
      compute.listener?.close();
      checkWaiters(compute);
    }
    this.anchor.close();
    await Promise.allSettled(computes.map((c) => this.stopSessions(c, 0)));
    await Promise.allSettled([...this.refreshes]);
    for (const compute of computes) {
      for (const session of [...compute.sessions]) this.endSession(session);
    }
    await Promise.allSettled(computes.map((c) => c.prepared ?? Promise.resolve()));
    await this.catalog
      .dropAll(computes.filter((c) => c.prepared !== undefined).map((c) => c.number))
      .catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }

  // --- listeners and sessions --------------------------------------------------------------

  private async openListener(compute: HostedCompute): Promise<void> {
    for (let attempt = 0; attempt < ADDRESS_ATTEMPTS; attempt++) {
      const server = net.createServer((socket) => {
        this.accept(compute, socket);
      });
      try {
        await listen(server, compute.address, this.port);
      } catch (error) {
        server.close();
        if (!(isCode(error, "EADDRINUSE") || isCode(error, "EADDRNOTAVAIL"))) throw error;
        // Someone else holds address:port: the endpoint moves to the next free address.
        compute.address = loopbackAddress(this.nextNumber++);
        compute.endpoint.host = compute.address;
        continue;
      }
      if (this.closing || compute.endpoint.deleted) {
        server.close();
        return;
      }
      compute.listener = server;
      return;
    }
  }

  private accept(compute: HostedCompute, client: Socket): void {
    if (this.closing || compute.endpoint.deleted) {
      client.destroy();
      return;
    }
    client.setNoDelay(true);
    const session: Session = {
      number: this.nextSession++,
      compute,
      client,
      upstream: undefined,
      port: undefined,
      closed: false,
    };
    compute.sessions.add(session);
    client.on("error", () => undefined);
    client.on("close", () => {
      this.endSession(session);
    });
    this.serve(session).catch((error: unknown) => {
      if (error instanceof Refusal && !session.closed) {
        client.end(errorResponse(error.sqlState, error.message));
        return;
      }
      if (!(error instanceof SessionClosed) && !session.closed) {
        client.end(errorResponse("XX000", `the simulated compute failed: ${describe(error)}`));
        return;
      }
      this.endSession(session);
    });
  }

  private async serve(session: Session): Promise<void> {
    const first = await readFirstMessage(session.client, STARTUP_TIMEOUT_MS).catch(() => {
      throw new SessionClosed();
    });
    if (first.kind === "cancel") {
      // A cancel request names its backend itself: the server finds it.
      await this.forwardCancel(first.packet);
      this.endSession(session);
      return;
    }
    const compute = session.compute;
    const endpoint = compute.endpoint;
    this.deps.settle();
    if (endpoint.deleted) throw new Refusal("XX000", `endpoint ${endpoint.id} not found`);
    if (endpoint.settings.disabled) {
      throw new Refusal(
        "XX000",
        "The endpoint has been disabled. Enable it using the API and retry.",
      );
    }
    // A connection is an access (seed 3.2): activity, and an idle compute starts.
    this.deps.plane.lifecycle.connect(endpoint);
    await this.untilRunning(session);
    await this.prepare(compute);
    const upstream = await this.connectUpstream(session);
    const port = upstream.localPort;
    if (port === undefined) throw new Error("the upstream socket has no local port");
    session.port = port;
    this.ports.set(port, session);
    await this.catalog.registerPort(port, endpoint.id, session.number);
    await this.writeRows([compute]);
    if (session.closed) throw new SessionClosed();
    if (!running(endpoint)) throw new Refusal("57P01", "the compute stopped");
    const parameters = withSettings(first.parameters, {
      search_path: `"$user",public,${this.catalog.endpointSchema(compute.number)},pg_catalog`,
    });
    upstream.write(encodeStartup(first.protocol, parameters));
    if (first.rest.length > 0) upstream.write(first.rest);
    session.client.pipe(upstream);
    upstream.pipe(session.client);
  }

  /** Resolves once the compute runs with no stop queued; rejects when that cannot come. */
  private untilRunning(session: Session): Promise<void> {
    const { compute } = session;
    const endpoint = compute.endpoint;
    if (running(endpoint)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = (outcome: () => void): void => {
        clearTimeout(timer);
        compute.waiters.delete(check);
        outcome();
      };
      const fail = (error: Error): void => {
        done(() => {
          reject(error);
        });
      };
      const check = (): void => {
        if (session.closed || this.closing) fail(new SessionClosed());
        else if (endpoint.deleted) fail(new Refusal("XX000", `endpoint ${endpoint.id} not found`));
        else if (endpoint.settings.disabled) {
          fail(new Refusal("XX000", "The endpoint has been disabled."));
        } else if (running(endpoint)) done(resolve);
      };
      const timer = setTimeout(() => {
        fail(new Refusal("08006", "the compute did not start in time"));
      }, WAKE_TIMEOUT_MS);
      compute.waiters.add(check);
    });
  }

  private connectUpstream(session: Session): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: this.upstream.host, port: this.upstream.port });
      session.upstream = socket;
      socket.setNoDelay(true);
      const onError = (error: Error): void => {
        reject(new Refusal("08006", `the compute's server does not answer: ${error.message}`));
      };
      socket.once("error", onError);
      socket.once("connect", () => {
        socket.off("error", onError);
        socket.on("error", () => undefined);
        socket.on("close", () => {
          this.endSession(session);
        });
        resolve(socket);
      });
      if (session.closed) socket.destroy();
    });
  }

  private forwardCancel(packet: Buffer): Promise<void> {
    return new Promise((resolve) => {
      const socket = net.connect({ host: this.upstream.host, port: this.upstream.port }, () => {
        socket.end(packet);
      });
      socket.on("error", () => undefined);
      socket.on("close", () => {
        resolve();
      });
    });
  }

  private endSession(session: Session): void {
    if (session.closed) return;
    session.closed = true;
    session.client.destroy();
    session.upstream?.destroy();
    session.compute.sessions.delete(session);
    if (session.port !== undefined && this.ports.get(session.port) === session) {
      this.ports.delete(session.port);
      this.endedPorts.push({ port: session.port, session: session.number });
    }
    checkWaiters(session.compute);
  }

  /**
   * A stop ends the compute's backends (clients read "terminating connection due to
   * administrator command"), then closes what is left of its sessions.
   */
  private async stopSessions(compute: HostedCompute, graceMs = STOP_GRACE_MS): Promise<void> {
    const sessions = [...compute.sessions].filter((s) => s.upstream !== undefined);
    if (sessions.length === 0) return;
    const ports = sessions.flatMap((s) => (s.port === undefined ? [] : [s.port]));
    try {
      await this.catalog.terminate(ports);
      if (graceMs > 0) await new Promise((resolve) => setTimeout(resolve, graceMs).unref());
    } finally {
      for (const session of sessions) this.endSession(session);
    }
  }

  // --- the server's side -------------------------------------------------------------------

  /** Creates the compute's schema once (again after a failure). */
  private async prepare(compute: HostedCompute): Promise<void> {
    compute.prepared ??= this.catalog
      .createEndpoint(compute.number, compute.endpoint.id, compute.settings.extension)
      .catch((error: unknown) => {
        compute.prepared = undefined;
        throw error;
      });
    await compute.prepared;
  }

  private loadOf(compute: HostedCompute): FileCacheLoad {
    const cacheBytes = fileCacheBytes(compute.endpoint.minCu);
    const workingSet = compute.settings.workingSetBytes;
    return {
      readsPerSecond: READS_PER_CU_SECOND * compute.endpoint.minCu,
      hitRatio: compute.settings.hitRatio ?? modelHitRatio(workingSet, cacheBytes),
      capacityBytes: Math.min(workingSet, cacheBytes),
    };
  }

  /**
   * Writes the computes' rows as they are now. Writes go one after another, in the order of
   * the calls, so that an older snapshot never lands after a newer one.
   */
  private writeRows(computes: readonly HostedCompute[]): Promise<void> {
    const now = this.deps.plane.scheduler.nowUs;
    const rows: ComputeRow[] = computes.map((compute) => {
      compute.dirty = false;
      const counters = compute.run?.counters(now) ?? EMPTY_COUNTERS;
      const startedUs = compute.endpoint.startedAtUs;
      return {
        endpointId: compute.endpoint.id,
        startedAt: startedUs === undefined ? null : microsToDate(startedUs),
        misses: counters.misses,
        hits: counters.hits,
        used: counters.used,
        writes: counters.writes,
        hang: compute.settings.hang,
      };
    });
    const written = this.writes.then(() => this.catalog.writeComputes(rows));
    this.writes = written.catch(() => undefined);
    return written;
  }

  /**
   * One look: due events, waiting sessions, the sessions' backends (activity), the numbers of
   * computes with sessions (or changed; `all`: every prepared one), ended sessions' ports.
   */
  private tick(all: boolean): Promise<void> {
    const previous = this.ticking ?? Promise.resolve();
    if (this.ticking !== undefined && !all) return previous;
    const next = previous.then(async () => {
      if (this.closing) return;
      this.deps.settle();
      for (const compute of this.computes.values()) checkWaiters(compute);
      try {
        await this.observeActivity();
        const due = [...this.computes.values()].filter(
          (c) =>
            c.prepared !== undefined &&
            (all || c.dirty || (c.sessions.size > 0 && c.endpoint.currentState === "active")),
        );
        await Promise.allSettled(due.map((c) => c.prepared ?? Promise.resolve()));
        await this.writeRows(due.filter((c) => c.prepared !== undefined));
        const ended = this.endedPorts;
        this.endedPorts = [];
        await this.catalog.forgetPorts(ended);
      } catch {
        // The server is away for a moment: the next tick tries again.
      }
    });
    const settled = next.finally(() => {
      if (this.ticking === settled) this.ticking = undefined;
    });
    this.ticking = settled;
    return settled;
  }

  private async observeActivity(): Promise<void> {
    const ports = [...this.ports.keys()];
    const backends = await this.catalog.backends(ports);
    this.deps.settle();
    const byCompute = new Map<HostedCompute, typeof backends>();
    // A compute seen busy whose sessions have all gone is looked at once more: no longer busy.
    for (const compute of this.computes.values()) {
      if (compute.monitor.busy) byCompute.set(compute, []);
    }
    for (const session of this.ports.values()) byCompute.set(session.compute, []);
    for (const backend of backends) {
      const session = this.ports.get(backend.clientPort);
      if (session !== undefined) byCompute.get(session.compute)?.push(backend);
    }
    for (const [compute, rows] of byCompute) {
      if (compute.monitor.observe(rows)) {
        this.deps.plane.lifecycle.clientActivity(compute.endpoint);
      }
    }
  }

  private computeOf(endpointId: string): HostedCompute {
    const compute = this.computes.get(endpointId);
    if (compute === undefined || compute.endpoint.deleted) {
      throw notFound(`endpoint ${endpointId} not found`);
    }
    return compute;
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch(() => undefined);
    this.refreshes.add(tracked);
    void tracked.finally(() => this.refreshes.delete(tracked));
  }
}

const EMPTY_COUNTERS: FileCacheCounters = {
  misses: 0,
  hits: 0,
  used: 0,
  writes: 0,
  hitRatio: null,
};

/** The compute runs and no stop is queued: a session may go through. */
function running(endpoint: EndpointState): boolean {
  return (
    !endpoint.deleted &&
    endpoint.currentState === "active" &&
    !(endpoint.chain?.pendingActions() ?? []).includes("suspend_compute")
  );
}

function checkWaiters(compute: HostedCompute): void {
  for (const check of [...compute.waiters]) check();
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

function isCode(error: unknown, code: string): boolean {
  return error instanceof Error && "code" in error && error.code === code;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
