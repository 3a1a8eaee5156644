import type { SeededRandom } from "../random.js";

export const FAULT_KINDS = ["status", "latency", "malformed", "truncated", "drop"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** A fault as configured through `POST /_sim/faults` (wire names). */
export interface FaultSpec {
  /** An API route name (see `API_ROUTE_NAMES`); absent: every API route. */
  readonly route?: string | undefined;
  /** An HTTP method; absent: every method. */
  readonly method?: string | undefined;
  readonly kind: FaultKind;
  /** For `status`: the status to answer (default 503). */
  readonly status?: number | undefined;
  /** For `status`: the `Retry-After` header in seconds (a 429 gets 1 unless set). */
  readonly retry_after_seconds?: number | undefined;
  /** For `latency`: the delay added before the request is handled. */
  readonly latency_ms?: number | undefined;
  /** Probability that a matching request is hit (default 1). */
  readonly rate?: number | undefined;
  /** Number of requests to hit, after which the fault is spent (default unlimited). */
  readonly count?: number | undefined;
}

export interface Fault extends FaultSpec {
  readonly id: string;
  /** How many requests it has hit so far. */
  readonly fired: number;
}

/** What to do with one request: added latency, and at most one fault that decides the answer. */
export interface FaultDecision {
  readonly latencyMs: number;
  readonly fault: Fault | undefined;
}

const DEFAULT_FAULT_STATUS = 503;

/**
 * The configured faults. For each API request, every matching latency fault adds its delay;
 * then the first other matching fault (in the order they were added) that fires decides the
 * answer. A `rate` draws from the simulator's seeded fault stream, so the same requests meet
 * the same faults under the same seed.
 */
export class FaultRegistry {
  private faults: { spec: FaultSpec; id: string; fired: number }[] = [];
  private nextId = 1;

  constructor(private readonly random: SeededRandom) {}

  add(spec: FaultSpec): Fault {
    const entry = {
      spec:
        spec.kind === "status" ? { ...spec, status: spec.status ?? DEFAULT_FAULT_STATUS } : spec,
      id: `fault-${this.nextId++}`,
      fired: 0,
    };
    this.faults.push(entry);
    return view(entry);
  }

  list(): Fault[] {
    return this.faults.map(view);
  }

  /** Removes every fault; returns how many there were. */
  clear(): number {
    const count = this.faults.length;
    this.faults = [];
    return count;
  }

  decide(route: string, method: string): FaultDecision {
    let latencyMs = 0;
    let decisive: Fault | undefined;
    for (const entry of this.faults) {
      const { spec } = entry;
      if (spec.route !== undefined && spec.route !== route) continue;
      if (spec.method !== undefined && spec.method !== method) continue;
      if (spec.count !== undefined && entry.fired >= spec.count) continue;
      if (spec.kind !== "latency" && decisive !== undefined) continue;
      if (spec.rate !== undefined && !(this.random.next() < spec.rate)) continue;
      entry.fired++;
      if (spec.kind === "latency") latencyMs += spec.latency_ms ?? 0;
      else decisive = view(entry);
    }
    return { latencyMs, fault: decisive };
  }
}

/** `Retry-After` of a status fault: as configured, or 1 s for a 429 configured without one. */
export function faultRetryAfter(fault: FaultSpec): number | undefined {
  return fault.retry_after_seconds ?? (fault.status === 429 ? 1 : undefined);
}

function view(entry: { spec: FaultSpec; id: string; fired: number }): Fault {
  return { ...entry.spec, id: entry.id, fired: entry.fired };
}
