/**
 * The simulator's compute host: it follows the control plane's endpoints (created, started,
 * suspended, deleted) and answers the `/_sim` interface's view and settings of a compute. Its
 * parts: what it keeps (host-state.ts), the listeners (listeners.ts), the clients' sessions
 * (sessions.ts) and its side on the server with the periodic look (catalog-sync.ts).
 */
import { randomBytes } from "node:crypto";
import net, { type AddressInfo, type Server } from "node:net";
import pg from "pg";
import { conflict, errorMessage, notFound } from "../errors.js";
import type { SimComputeRequest } from "../http/sim-schemas.js";
import type { ComputeEvents, EndpointState } from "../model/state.js";
import type { SimComputeView } from "../sim-api.js";
import { toIsoSeconds } from "../time.js";
import { loopbackAddress } from "./addresses.js";
import { Catalog, prepareServer, withDatabase } from "./catalog.js";
import { CatalogSync } from "./catalog-sync.js";
import { FileCacheRun, fileCacheBytes } from "./file-cache.js";
import {
  checkWaiters,
  countersOf,
  hostedCompute,
  loadOf,
  type ComputeHostDeps,
  type HostedCompute,
} from "./host-state.js";
import { listen, openListener, type ListenerDeps } from "./listeners.js";
import {
  DEFAULT_COMPUTE_DATABASE,
  SIMULATOR_APPLICATION_NAME,
  type ComputeHostOptions,
} from "./options.js";
import { Sessions, upstreamOf, type Upstream } from "./sessions.js";

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
  private readonly refreshes = new Set<Promise<void>>();
  private nextNumber = 1;
  private closing = false;
  private readonly sessions: Sessions;
  private readonly catalogSync: CatalogSync;
  private readonly listeners: ListenerDeps;

  private constructor(
    private readonly deps: ComputeHostDeps,
    private readonly catalog: Catalog,
    private readonly pool: pg.Pool,
    upstream: Upstream,
    private readonly anchor: Server,
    /** The port every endpoint listens on. */
    readonly port: number,
  ) {
    const closing = (): boolean => this.closing;
    this.sessions = new Sessions({
      simulator: deps,
      catalog,
      upstream,
      closing,
      prepare: (compute) => this.catalogSync.prepare(compute),
      writeRows: (computes) => this.catalogSync.writeRows(computes),
    });
    this.catalogSync = new CatalogSync(deps, catalog, this.computes, this.sessions, closing);
    this.listeners = {
      port,
      nextAddress: () => loopbackAddress(this.nextNumber++),
      accept: (compute, client) => {
        this.sessions.accept(compute, client);
      },
      closing,
    };
  }

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
    host.catalogSync.start();
    return host;
  }

  // --- what the model tells the host ------------------------------------------------------

  created(endpoint: EndpointState): void {
    if (this.closing || this.computes.has(endpoint.id)) return;
    const compute = hostedCompute(endpoint, this.nextNumber++);
    endpoint.host = compute.address;
    this.computes.set(endpoint.id, compute);
    this.track(openListener(compute, this.listeners));
  }

  started(endpoint: EndpointState): void {
    const compute = this.computes.get(endpoint.id);
    if (compute === undefined) return;
    const now = this.deps.plane.scheduler.nowUs;
    compute.run = new FileCacheRun(now, loadOf(compute));
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
    this.track(this.sessions.stop(compute));
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
      this.sessions.stop(compute).then(async () => {
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
    const counters = countersOf(compute, now);
    const endpoint = compute.endpoint;
    const load = loadOf(compute);
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
    compute.run?.change(this.deps.plane.scheduler.nowUs, loadOf(compute));
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
            `the view of endpoint ${endpointId} could not be replaced (${errorMessage(error)}): its sessions hold it; retry`,
          );
        }
      }
    }
    await this.catalogSync.prepare(compute);
    await this.catalogSync.writeRows([compute]);
    return this.view(endpointId);
  }

  /** Looks at the sessions' activity and writes every compute's numbers now. */
  async sync(): Promise<void> {
    await this.catalogSync.tick(true);
  }

  /** Ends every session, closes the listeners and drops the host's schemas. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.deps.plane.world.computeEvents = undefined;
    await this.catalogSync.stop();
    const computes = [...this.computes.values()];
    for (const compute of computes) {
      compute.listener?.close();
      checkWaiters(compute);
    }
    this.anchor.close();
    await Promise.allSettled(computes.map((c) => this.sessions.stop(c, 0)));
    await Promise.allSettled([...this.refreshes]);
    for (const compute of computes) {
      for (const session of [...compute.sessions]) this.sessions.end(session);
    }
    await Promise.allSettled(computes.map((c) => c.prepared ?? Promise.resolve()));
    await this.catalog
      .dropAll(computes.filter((c) => c.prepared !== undefined).map((c) => c.number))
      .catch(() => undefined);
    await this.pool.end().catch(() => undefined);
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
