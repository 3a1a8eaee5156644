/**
 * This replica's share of the projects: all of them with the file store; with the Postgres store,
 * those its lease manager holds, each committing under its lease's fencing token. A fenced
 * commit is logged and gives the lease up at once.
 */
import {
  LeaseManager,
  LeasedStateStore,
  type Lease,
  type LeaseHolder,
  type LeaseObserver,
} from "../leases/index.js";
import { errorFields, type Logger } from "../logger.js";
import type { LeaseLostError } from "../store/fencing.js";
import type { StateStore } from "../store/index.js";
import type { StoreBackend } from "./store-backend.js";

/** The projects to watch, each with the fencing token it commits under (undefined: no leases). */
export type WantedProjects = ReadonlyMap<string, number | undefined>;

export interface LeaseInputs {
  readonly logger: Logger;
  readonly observer?: LeaseObserver | undefined;
}

/** The lease manager of the Postgres store; undefined with the file store. */
export function createLeases(backend: StoreBackend, inputs: LeaseInputs): LeaseManager | undefined {
  if (backend.kind !== "postgres") return undefined;
  return new LeaseManager({
    db: backend.store.control,
    replicaId: backend.replicaId,
    leaseMs: backend.leaseMs,
    prepare: () => backend.store.open(),
    logger: inputs.logger,
    ...(inputs.observer === undefined ? {} : { observer: inputs.observer }),
  });
}

/** What the held set drives: the watched projects, and a drain before each release. */
export function leaseHolder(targets: {
  /** The held set changed: watch exactly these. */
  readonly watch: (wanted: WantedProjects) => Promise<void>;
  /** Resolves once nothing is in flight for a project given up, before its lease is released. */
  readonly drain: (projectId: string) => Promise<void>;
}): LeaseHolder {
  return { onChange: (held) => targets.watch(tokensOf(held)), drain: targets.drain };
}

/**
 * Of the projects `ids`, those this replica watches: all of them, or with leases those it holds
 * (the others are offered to the lease manager, and come with their leases).
 */
export function shareOf(leases: LeaseManager | undefined, ids: readonly string[]): WantedProjects {
  if (leases === undefined) return new Map(ids.map((id) => [id, undefined]));
  leases.setCandidates(ids);
  return tokensOf(leases.held());
}

/** The store a project commits to: under its lease's fencing token, when it has one. */
export function storeFor(
  backend: StoreBackend,
  leases: LeaseManager | undefined,
): (projectId: string, token: number | undefined) => StateStore {
  return (_projectId, token) =>
    token === undefined || leases === undefined || backend.kind !== "postgres"
      ? backend.store
      : new LeasedStateStore(backend.store, { holder: leases.replicaId, token });
}

/** What a fenced commit leads to: a warning, and the lease given up at once. */
export function fencedCommits(
  leases: LeaseManager | undefined,
  log: Logger,
): (projectId: string, error: LeaseLostError, what: string) => void {
  return (projectId, error, what) => {
    log.warn(
      {
        project: projectId,
        replica: leases?.replicaId,
        token: error.fence?.token,
        reason: error.reason,
        ...errorFields(error),
      },
      `${what} rejected: this replica no longer holds the project's lease (fencing); nothing was written`,
    );
    if (leases !== undefined && error.fence !== undefined) {
      leases.fenced(projectId, error.fence.token, error.reason);
    }
  };
}

function tokensOf(held: ReadonlyMap<string, Lease>): WantedProjects {
  return new Map([...held].map(([id, lease]) => [id, lease.token]));
}
