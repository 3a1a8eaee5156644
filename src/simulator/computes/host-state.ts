/**
 * What the compute host needs of the simulator and what it keeps: each endpoint's compute (its
 * address, listener, test settings, activity monitor, file cache run and schema) and each
 * client's session, with the rules read off them: whether a session may go through, the file
 * cache load the settings make, and the counters at a moment.
 */
import type { Server, Socket } from "node:net";
import type { ControlPlane } from "../model/control-plane.js";
import type { EndpointState } from "../model/state.js";
import { ActivityMonitor } from "./activity.js";
import { loopbackAddress } from "./addresses.js";
import {
  DEFAULT_WORKING_SET_BYTES,
  fileCacheBytes,
  modelHitRatio,
  READS_PER_CU_SECOND,
  type FileCacheCounters,
  type FileCacheLoad,
  type FileCacheRun,
} from "./file-cache.js";
import type { ExtensionMode } from "./modes.js";

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

export interface HostedCompute {
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

export interface Session {
  /** Its number, unique in the host (its port's row in `client_ports` carries it). */
  readonly number: number;
  readonly compute: HostedCompute;
  readonly client: Socket;
  upstream: Socket | undefined;
  /** The upstream socket's local port: the server's `client_port` of the session. */
  port: number | undefined;
  closed: boolean;
}

/** A new endpoint's compute, at the address of its number, with no test's settings. */
export function hostedCompute(endpoint: EndpointState, number: number): HostedCompute {
  return {
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
}

/** The compute runs and no stop is queued: a session may go through. */
export function running(endpoint: EndpointState): boolean {
  return (
    !endpoint.deleted &&
    endpoint.currentState === "active" &&
    !(endpoint.chain?.pendingActions() ?? []).includes("suspend_compute")
  );
}

/** Lets each session waiting for the compute look at it again. */
export function checkWaiters(compute: HostedCompute): void {
  for (const check of [...compute.waiters]) check();
}

/** The load on the compute's file cache: its size's reads, at the ratio its settings make. */
export function loadOf(compute: HostedCompute): FileCacheLoad {
  const cacheBytes = fileCacheBytes(compute.endpoint.minCu);
  const workingSet = compute.settings.workingSetBytes;
  return {
    readsPerSecond: READS_PER_CU_SECOND * compute.endpoint.minCu,
    hitRatio: compute.settings.hitRatio ?? modelHitRatio(workingSet, cacheBytes),
    capacityBytes: Math.min(workingSet, cacheBytes),
  };
}

const EMPTY_COUNTERS: FileCacheCounters = {
  misses: 0,
  hits: 0,
  used: 0,
  writes: 0,
  hitRatio: null,
};

/** The compute's file cache counters at `nowUs`: all zero before its first start. */
export function countersOf(compute: HostedCompute, nowUs: number): FileCacheCounters {
  return compute.run?.counters(nowUs) ?? EMPTY_COUNTERS;
}
