/**
 * The compute host's side on the PostgreSQL server (catalog.ts), kept in step with the hosted
 * computes: each compute's schema, created once; their rows of statistics, written in the order
 * of the calls; and every 200 ms a look at due events, waiting sessions, the sessions' backends
 * (activity, told to the endpoint's lifecycle) and the ports of ended sessions.
 */
import { microsToDate } from "../time.js";
import type { Catalog, ComputeRow } from "./catalog.js";
import {
  checkWaiters,
  countersOf,
  type ComputeHostDeps,
  type HostedCompute,
} from "./host-state.js";
import type { Sessions } from "./sessions.js";

/** How often the host looks at its sessions' activity and writes their computes' numbers. */
const TICK_MS = 200;

export class CatalogSync {
  private ticker: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  /** The last write of the computes' rows (see writeRows). */
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: ComputeHostDeps,
    private readonly catalog: Catalog,
    /** The hosted computes by endpoint id. */
    private readonly computes: ReadonlyMap<string, HostedCompute>,
    private readonly sessions: Sessions,
    /** The host is closing: no look does anything any more. */
    private readonly closing: () => boolean,
  ) {}

  /** Looks every `TICK_MS`. */
  start(): void {
    this.ticker = setInterval(() => {
      void this.tick(false);
    }, TICK_MS).unref();
  }

  /** Looks no more; resolves once the look under way, if any, has ended. */
  async stop(): Promise<void> {
    clearInterval(this.ticker);
    await this.ticking;
  }

  /** Creates the compute's schema once (again after a failure). */
  async prepare(compute: HostedCompute): Promise<void> {
    compute.prepared ??= this.catalog
      .createEndpoint(compute.number, compute.endpoint.id, compute.settings.extension)
      .catch((error: unknown) => {
        compute.prepared = undefined;
        throw error;
      });
    await compute.prepared;
  }

  /**
   * Writes the computes' rows as they are now. Writes go one after another, in the order of
   * the calls, so that an older snapshot never lands after a newer one.
   */
  writeRows(computes: readonly HostedCompute[]): Promise<void> {
    const now = this.deps.plane.scheduler.nowUs;
    const rows: ComputeRow[] = computes.map((compute) => {
      compute.dirty = false;
      const counters = countersOf(compute, now);
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
  tick(all: boolean): Promise<void> {
    const previous = this.ticking ?? Promise.resolve();
    if (this.ticking !== undefined && !all) return previous;
    const next = previous.then(async () => {
      if (this.closing()) return;
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
        await this.catalog.forgetPorts(this.sessions.takeEndedPorts());
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
    const ports = this.sessions.byPort;
    const backends = await this.catalog.backends([...ports.keys()]);
    this.deps.settle();
    const byCompute = new Map<HostedCompute, typeof backends>();
    // A compute seen busy whose sessions have all gone is looked at once more: no longer busy.
    for (const compute of this.computes.values()) {
      if (compute.monitor.busy) byCompute.set(compute, []);
    }
    for (const session of ports.values()) byCompute.set(session.compute, []);
    for (const backend of backends) {
      const session = ports.get(backend.clientPort);
      if (session !== undefined) byCompute.get(session.compute)?.push(backend);
    }
    for (const [compute, rows] of byCompute) {
      if (compute.monitor.observe(rows)) {
        this.deps.plane.lifecycle.clientActivity(compute.endpoint);
      }
    }
  }
}
