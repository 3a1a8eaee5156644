/**
 * Project leases: how replicas sharing one Postgres state store split the projects between
 * them, so that each project is polled by exactly one replica at a time.
 *
 * A lease is a row of `pgcp_leases` (project, holder, fencing token, expiry; its statements are
 * in `store/lease-table.ts`). Every `heartbeatMs` (a third of the lease by default) each
 * replica, in order:
 *   1. registers itself in `pgcp_replicas` (its heartbeat);
 *   2. renews the leases it holds, each conditioned on its holder and fencing token: a lease
 *      that is no longer its own is lost, and its project dropped at once;
 *   3. counts the live replicas (a heartbeat within one lease duration) and plans its even
 *      share of the projects (`lease-plan.ts`), and counts the projects with no live holder
 *      (what `pgcp_projects_unowned` shows);
 *   4. gives up projects above its share (rebalancing after a replica joined) or no longer
 *      watched: it stops polling and delivering them, waits for what is in flight (`drain`),
 *      and only then releases the lease, so that the next holder starts from a settled state;
 *   5. claims free or expired leases up to its share, each claim increasing the project's
 *      fencing token.
 * Expiry is measured by the database's clock only (`now()`), never compared across machines.
 *
 * Why a lease table rather than advisory locks: a session-level advisory lock lasts as long as
 * its connection, so it cannot fence anything: a replica paused past its lease (or cut off
 * from the database) still believes it holds the lock, and its late writes cannot be told from
 * current ones. A lease row carries a fencing token that outlives the connection: every state
 * commit and outbox acknowledgement is made under the token of its claim, and the store
 * rejects it (`LeaseLostError`) once another claim has happened. Expiry also makes takeover
 * explicit and observable (the lease's age, its holder), and the rows make a fair split easy.
 *
 * The manager also knows how long each lease is certainly still valid on the local monotonic
 * clock (from the moment its last renewal was sent, less a margin): the notifier delivers a
 * project's alerts only while it is, so a paused replica that wakes up after its lease ran
 * out sends nothing before it has found out what it still holds.
 */
import type { LeaseLossReason } from "../store/fencing.js";
import {
  addLeaseRows,
  claimLeases,
  countUnowned,
  forgetGoneReplicas,
  liveReplicaIds,
  registerReplica,
  releaseLeases,
  renewLeases,
  unregisterReplica,
  type LeaseDatabase,
} from "../store/lease-table.js";
import type { Logger } from "../logger.js";
import { errorFields } from "../logger.js";
import { planLeases, type PlannedReleaseReason } from "./lease-plan.js";
import { systemClock } from "../clock.js";

/** A project this replica holds, with the fencing token of its claim. */
export interface Lease {
  readonly projectId: string;
  readonly holder: string;
  readonly token: number;
}

/** Why this replica gave a project up by itself. */
export type ReleaseReason = PlannedReleaseReason | "shutdown";
/**
 * Why this replica lost a project: another replica claimed it (`taken`), heartbeats failed
 * past the lease (`expired`), or the store rejected a commit under it (`fenced`).
 */
export type LossReason = "taken" | "expired" | "fenced";

/** What the lease manager reports (metrics subscribe). */
export interface LeaseObserver {
  acquired?(projectId: string, token: number): void;
  released?(projectId: string, reason: ReleaseReason): void;
  lost?(projectId: string, reason: LossReason): void;
  /** The store rejected a commit made under a lease this replica no longer held. */
  commitFenced?(projectId: string, reason: LeaseLossReason): void;
  heartbeatFailed?(error: unknown): void;
  /** A heartbeat counted other live replicas, shares, fleet total or unowned projects. */
  standingChanged?(): void;
}

/** How old this replica's leases are, on the monotonic clock. */
export interface LeaseAges {
  /** Since the latest successful heartbeat (which renewed every lease held) was sent. */
  readonly sinceRenewalMs: number | undefined;
  /** Since the oldest lease held was claimed (undefined: none held). */
  readonly oldestHeldMs: number | undefined;
  /** Since the newest lease held was claimed. */
  readonly newestHeldMs: number | undefined;
}

export interface LeaseManagerOptions {
  /** Where the lease statements run (the store's `control`). */
  readonly db: LeaseDatabase;
  readonly replicaId: string;
  /** How long a lease lasts without renewal. */
  readonly leaseMs: number;
  /** How often leases are renewed and the split is checked (default: a third of the lease). */
  readonly heartbeatMs?: number;
  /**
   * Longest wait for a project's work in flight before its lease is released (default 2 leases).
   */
  readonly drainTimeoutMs?: number;
  /** Makes the database ready (migrations) before a heartbeat; tried again after a failure. */
  readonly prepare?: () => Promise<void>;
  readonly logger: Logger;
  readonly observer?: LeaseObserver;
  /** A monotonic clock in milliseconds (default `performance.now`). */
  readonly monotonic?: () => number;
}

/** What the manager's held set drives, given at its start. */
export interface LeaseHolder {
  /** The set of held projects changed: poll and deliver exactly these. */
  readonly onChange: (held: ReadonlyMap<string, Lease>) => Promise<void> | void;
  /** Resolves once nothing is in flight for a project given up (before its lease is released). */
  readonly drain?: (projectId: string) => Promise<void>;
}

interface HeldLease extends Lease {
  /** On the monotonic clock: until then the lease is certainly still valid. */
  validUntil: number;
  readonly acquiredAt: number;
}

export class LeaseManager {
  readonly replicaId: string;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly #options: LeaseManagerOptions;
  readonly #log: Logger;
  readonly #mono: () => number;
  /** The projects this replica should share with the others (sorted, unique). */
  #candidates: string[] = [];
  #candidatesSaved = false;
  readonly #held = new Map<string, HeldLease>();
  /** Given up, waiting for their work in flight; still renewed until released. */
  readonly #releasing = new Map<string, HeldLease>();
  #live: number | undefined;
  #target: number | undefined;
  #fleet: number | undefined;
  #unowned: number | undefined;
  #lastHeartbeatMs: number | undefined;
  /** Why the latest heartbeat failed; undefined once one succeeds. */
  #failure: { readonly error: unknown } | undefined;
  /** On the monotonic clock: when the latest successful heartbeat started. */
  #lastBeatStarted: number | undefined;
  #failing = false;
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  /** What the held set drives; set by `start`. */
  #holder: LeaseHolder | undefined;
  /** Changes of the held set reach `onChange` one after the other, in order. */
  #changes: Promise<void> = Promise.resolve();
  readonly #drains = new Set<Promise<void>>();

  constructor(options: LeaseManagerOptions) {
    this.#options = options;
    this.replicaId = options.replicaId;
    this.leaseMs = options.leaseMs;
    this.heartbeatMs = options.heartbeatMs ?? Math.max(100, Math.floor(options.leaseMs / 3));
    this.#log = options.logger;
    this.#mono = options.monotonic ?? (() => systemClock.monotonic());
  }

  /** The projects held now (not those being given up). */
  held(): ReadonlyMap<string, Lease> {
    return new Map(this.#held);
  }

  heldProjects(): string[] {
    return [...this.#held.keys()].sort();
  }

  /** Live replicas at the latest heartbeat (undefined before the first). */
  get liveReplicas(): number | undefined {
    return this.#live;
  }

  /** This replica's share at the latest heartbeat (undefined before the first). */
  get targetProjects(): number | undefined {
    return this.#target;
  }

  /** The projects the replicas share at the latest heartbeat: the fleet's total. */
  get fleetProjects(): number | undefined {
    return this.#fleet;
  }

  /**
   * Of the projects shared, those with no live holder at the latest heartbeat (by the
   * database's clock), counted before this replica's claims of that heartbeat.
   */
  get unownedProjects(): number | undefined {
    return this.#unowned;
  }

  /** Wall-clock time (ms) of the latest successful heartbeat. */
  get lastHeartbeatMs(): number | undefined {
    return this.#lastHeartbeatMs;
  }

  /** While heartbeats fail (the store cannot be reached): the latest one's error. */
  get heartbeatFailure(): { readonly error: unknown } | undefined {
    return this.#failure;
  }

  /** How old the latest renewal and the leases held are, on the monotonic clock. */
  leaseAges(): LeaseAges {
    const now = this.#mono();
    let oldest: number | undefined;
    let newest: number | undefined;
    for (const lease of this.#held.values()) {
      oldest = Math.min(oldest ?? Infinity, lease.acquiredAt);
      newest = Math.max(newest ?? -Infinity, lease.acquiredAt);
    }
    const since = (at: number | undefined) => (at === undefined ? undefined : now - at);
    return {
      sinceRenewalMs: since(this.#lastBeatStarted),
      oldestHeldMs: since(oldest),
      newestHeldMs: since(newest),
    };
  }

  /**
   * True while this replica holds the project (under `token`, when given) and the lease is
   * certainly still valid by the local clock. Alerts are sent only then.
   */
  isValid(projectId: string, token?: number): boolean {
    const lease = this.#held.get(projectId);
    if (lease === undefined) return false;
    if (token !== undefined && lease.token !== token) return false;
    return this.#mono() < lease.validUntil;
  }

  /** The projects to share (every replica should be given the same list). */
  setCandidates(projectIds: readonly string[]): void {
    const next = [...new Set(projectIds)].sort();
    if (
      next.length === this.#candidates.length &&
      next.every((id, i) => id === this.#candidates[i])
    )
      return;
    this.#candidates = next;
    this.#candidatesSaved = false;
    if (this.#holder !== undefined) this.nudge();
  }

  /**
   * Runs the first heartbeat (claims), then keeps beating until `stop`, telling `holder` each
   * change of the held set.
   */
  async start(holder: LeaseHolder): Promise<void> {
    this.#holder = holder;
    this.#log.info(
      { replica: this.replicaId, leaseSeconds: this.leaseMs / 1000 },
      "sharing projects through Postgres leases",
    );
    await this.#run();
  }

  /** Beats again as soon as possible (the project list changed, or a lease was lost). */
  nudge(): void {
    if (this.#stopped) return;
    if (this.#ticking !== undefined) {
      this.#again = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#run(), 0);
    this.#timer.unref();
  }

  /**
   * The store rejected a commit made under `token`: the project is no longer this replica's.
   * It is dropped at once, and its lease freed if it still names this replica (a lease that
   * expired, or state that moved on), so that a fresh claim reloads the project.
   */
  fenced(projectId: string, token: number, reason: LeaseLossReason): void {
    this.#options.observer?.commitFenced?.(projectId, reason);
    const lease = this.#held.get(projectId);
    if (lease?.token !== token) return;
    this.#held.delete(projectId);
    this.#options.observer?.lost?.(projectId, "fenced");
    this.#log.warn(
      { project: projectId, replica: this.replicaId, token, reason },
      "lease lost: the store rejected a commit (fencing); the project is dropped",
    );
    this.#emit();
    void this.#release([lease]).catch((error: unknown) => {
      this.#log.debug({ project: projectId, ...errorFields(error) }, "could not free a lost lease");
    });
    this.nudge();
  }

  /** Stops beating and releases every lease this replica holds, so others take over at once. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#ticking;
    await Promise.allSettled([...this.#drains]);
    const leases = [...this.#held.values(), ...this.#releasing.values()];
    for (const lease of this.#held.values()) {
      this.#options.observer?.released?.(lease.projectId, "shutdown");
    }
    this.#held.clear();
    this.#releasing.clear();
    try {
      await this.#release(leases);
      await unregisterReplica(this.#options.db, this.replicaId);
      this.#log.info(
        { replica: this.replicaId, released: leases.length },
        "leases released for shutdown",
      );
    } catch (error) {
      this.#log.warn(
        { replica: this.replicaId, ...errorFields(error) },
        "could not release the leases at shutdown; they expire by themselves",
      );
    }
    await this.#changes;
  }

  async #run(): Promise<void> {
    if (this.#stopped || this.#ticking !== undefined) return;
    const started = this.#mono();
    const tick = this.#tick(started);
    this.#ticking = tick;
    try {
      await tick;
    } finally {
      this.#ticking = undefined;
    }
    // `stop` may have been called while the heartbeat ran.
    if (this.#halted()) return;
    const delay = this.#again ? 0 : Math.max(0, started + this.heartbeatMs - this.#mono());
    this.#again = false;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#run(), delay);
    this.#timer.unref();
  }

  async #tick(started: number): Promise<void> {
    // Whatever part of the heartbeat got through, the daemon hears what is held after it.
    const before = this.#signature();
    const standing = this.#standing();
    const releases: { lease: HeldLease; reason: ReleaseReason }[] = [];
    try {
      await this.#options.prepare?.();
      await this.#beat(started, releases);
      this.#lastHeartbeatMs = systemClock.wall();
      this.#failure = undefined;
      this.#lastBeatStarted = started;
      if (this.#failing) {
        this.#failing = false;
        this.#log.info({ replica: this.replicaId }, "lease heartbeat recovered");
      }
    } catch (error) {
      this.#failure = { error };
      this.#options.observer?.heartbeatFailed?.(error);
      const fields = { replica: this.replicaId, ...errorFields(error) };
      if (!this.#failing) this.#log.warn(fields, "lease heartbeat failed; retrying");
      else this.#log.debug(fields, "lease heartbeat failed again");
      this.#failing = true;
      this.#expireLocally();
    }
    if (this.#signature() !== before) this.#emit();
    if (this.#standing() !== standing) this.#options.observer?.standingChanged?.();
    // Applied before the next heartbeat: the daemon polls exactly what is held.
    await this.#changes;
    for (const { lease, reason } of releases) this.#handOver(lease, reason);
  }

  /** One heartbeat; the leases it gives up are added to `releases`. */
  async #beat(
    started: number,
    releases: { lease: HeldLease; reason: ReleaseReason }[],
  ): Promise<void> {
    const { db } = this.#options;
    const id = this.replicaId;
    const validUntil = started + this.leaseMs - this.#margin();
    const candidates = this.#candidates;
    // A replica that knows no project yet (its first discovery failed) takes no share: were it
    // counted, the others would leave its share unclaimed.
    if (candidates.length > 0) await registerReplica(db, id);
    else await unregisterReplica(db, id);

    const mine = [...this.#held.values(), ...this.#releasing.values()];
    if (mine.length > 0) {
      const renewed = await renewLeases(db, id, mine, this.leaseMs);
      for (const lease of [...this.#held.values()]) {
        if (renewed.has(lease.projectId)) {
          lease.validUntil = validUntil;
          continue;
        }
        this.#held.delete(lease.projectId);
        this.#options.observer?.lost?.(lease.projectId, "taken");
        this.#log.warn(
          { project: lease.projectId, replica: id, token: lease.token },
          "lease lost: another replica holds the project now; it is dropped",
        );
      }
      for (const lease of this.#releasing.values()) {
        if (renewed.has(lease.projectId)) lease.validUntil = validUntil;
      }
    }

    await forgetGoneReplicas(db, this.leaseMs);
    const live = await liveReplicaIds(db, this.leaseMs);
    if (!this.#candidatesSaved && candidates.length > 0) await addLeaseRows(db, candidates);
    // (Unless the list changed meanwhile: then the next heartbeat saves the new one.)
    if (this.#candidates === candidates) this.#candidatesSaved = true;

    const plan = planLeases({ replicaId: id, held: [...this.#held.values()], candidates, live });
    this.#live = plan.live.length;
    this.#target = plan.target;
    this.#fleet = candidates.length;
    this.#unowned = await countUnowned(db, candidates);
    for (const release of plan.releases) {
      this.#held.delete(release.lease.projectId);
      this.#releasing.set(release.lease.projectId, release.lease);
      releases.push(release);
    }

    if (plan.claim > 0) {
      const claimed = await claimLeases(db, id, candidates, plan.claim, this.leaseMs);
      const now = this.#mono();
      for (const row of claimed) {
        const lease: HeldLease = { ...row, holder: id, validUntil, acquiredAt: now };
        this.#held.set(lease.projectId, lease);
        this.#options.observer?.acquired?.(lease.projectId, lease.token);
        this.#log.info(
          { project: lease.projectId, replica: id, token: lease.token },
          "lease acquired",
        );
      }
    }
    this.#log.debug(
      { replica: id, live: plan.live.length, target: plan.target, held: this.#held.size },
      "lease heartbeat",
    );
  }

  /** Heartbeats are failing: drop the leases that may have run out by now. */
  #expireLocally(): void {
    const now = this.#mono();
    for (const lease of [...this.#held.values()]) {
      if (now < lease.validUntil) continue;
      this.#held.delete(lease.projectId);
      this.#options.observer?.lost?.(lease.projectId, "expired");
      this.#log.warn(
        { project: lease.projectId, replica: this.replicaId, token: lease.token },
        "lease may have expired (heartbeats failed); the project is dropped",
      );
    }
  }

  /** Waits for the project's work in flight, then releases its lease (in the background). */
  #handOver(lease: HeldLease, reason: ReleaseReason): void {
    this.#options.observer?.released?.(lease.projectId, reason);
    this.#log.info(
      { project: lease.projectId, replica: this.replicaId, token: lease.token, reason },
      "releasing lease",
    );
    const drain = this.#holder?.drain?.(lease.projectId) ?? Promise.resolve();
    const timeoutMs = this.#options.drainTimeoutMs ?? 2 * this.leaseMs;
    let timer: NodeJS.Timeout | undefined;
    const bounded = Promise.race([
      drain.catch(() => undefined),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
        timer.unref();
      }),
    ]);
    const done = bounded
      .then(async () => {
        clearTimeout(timer);
        if (this.#stopped) return;
        if (this.#releasing.get(lease.projectId) !== lease) return;
        await this.#release([lease]);
        this.#releasing.delete(lease.projectId);
      })
      .catch((error: unknown) => {
        // Still renewed: the next heartbeat hands it over again or lets it expire.
        this.#releasing.delete(lease.projectId);
        this.#log.warn(
          { project: lease.projectId, ...errorFields(error) },
          "could not release a lease; it expires by itself",
        );
      });
    this.#drains.add(done);
    void done.finally(() => this.#drains.delete(done));
  }

  /** Frees the leases that still name this replica with their token. */
  async #release(leases: readonly Lease[]): Promise<void> {
    await releaseLeases(this.#options.db, this.replicaId, leases);
  }

  #emit(): void {
    const snapshot: ReadonlyMap<string, Lease> = new Map(
      [...this.#held].map(([id, l]) => [id, { projectId: id, holder: l.holder, token: l.token }]),
    );
    this.#changes = this.#changes
      .then(() => this.#holder?.onChange(snapshot))
      .catch((error: unknown) => {
        this.#log.error(errorFields(error), "applying the held projects failed");
      });
  }

  /** What a heartbeat counts, to tell whether it changed. */
  #standing(): string {
    return [this.#live, this.#target, this.#fleet, this.#unowned].map(String).join(",");
  }

  /** The held projects and their tokens, to tell whether a heartbeat changed them. */
  #signature(): string {
    return [...this.#held.values()]
      .map((l) => `${l.projectId}:${String(l.token)}`)
      .sort()
      .join(",");
  }

  #halted(): boolean {
    return this.#stopped;
  }

  /** What the local validity keeps back from the lease: clock-rate drift and scheduling. */
  #margin(): number {
    return Math.max(100, Math.min(this.leaseMs * 0.2, 5_000));
  }
}
