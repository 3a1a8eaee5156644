import type { RunningOperation } from "../model/operation-runner.js";
import type { SeededRandom } from "../random.js";
import { secondsToMicros } from "../time.js";

export const FAULT_KINDS = [
  "status",
  "latency",
  "malformed",
  "truncated",
  "drop",
  "drip",
  "oversized",
  "overlap",
  "cursor_cycle",
  "no_pagination",
  "foreign_project",
  "null_fields",
  "misdated",
  "failed_operations",
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/**
 * The routes a kind can hit, for the kinds that only make sense on some (a fault of such a kind
 * never matches a request of another route: it neither fires nor draws from the fault stream).
 */
export const FAULT_KIND_ROUTES: Partial<Record<FaultKind, readonly string[]>> = {
  overlap: ["listOperations"],
  cursor_cycle: ["listOperations", "listProjects"],
  no_pagination: ["listOperations", "listProjects"],
  foreign_project: ["listOperations", "getOperation"],
  null_fields: ["listOperations", "getOperation"],
};

/** Kinds that only hit requests sent with a `cursor`. */
const CURSOR_KINDS: ReadonlySet<FaultKind> = new Set(["overlap", "cursor_cycle"]);

/** Kinds that change what the answer says (the handler applies them); the request is applied. */
export const ANSWER_FAULT_KINDS = [
  "overlap",
  "cursor_cycle",
  "no_pagination",
  "foreign_project",
  "null_fields",
] as const;
export type AnswerFaultKind = (typeof ANSWER_FAULT_KINDS)[number];

/** The kind that misdates operations as the model creates them. */
const MISDATED = "misdated";
/** The kind that fails operations as the model runs them. */
const FAILED_OPERATIONS = "failed_operations";

/** Kinds that hit operations in the model, never requests. */
export const OPERATION_FAULT_KINDS: readonly FaultKind[] = [MISDATED, FAILED_OPERATIONS];

/** The placeholders of a `failed_operations` error text. */
export const FAILURE_PLACEHOLDERS = [
  "project_id",
  "branch_id",
  "endpoint_id",
  "operation_id",
  "n",
] as const;
/** `{n}`: a whole number below this, drawn from the fault stream for each failure. */
export const FAILURE_NUMBER_BOUND = 100_000;

export const DEFAULT_DRIP_BYTES = 1;
export const DEFAULT_DRIP_INTERVAL_MS = 1000;

/** A fault as configured through `POST /_sim/faults` (wire names). */
export interface FaultSpec {
  /**
   * Only requests for this project (`/projects/{project_id}/…`), or for `failed_operations`
   * only its operations; absent: any project.
   */
  readonly project_id?: string | undefined;
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
  /** For `drip`: bytes of the body sent per chunk (default 1). */
  readonly drip_bytes?: number | undefined;
  /** For `drip`: pause between two chunks (default 1000). */
  readonly drip_interval_ms?: number | undefined;
  /** For `oversized`: the least size of the padded body, in bytes. */
  readonly size_bytes?: number | undefined;
  /** For `misdated`: how far the shown `created_at` is moved from the real creation time. */
  readonly offset_seconds?: number | undefined;
  /** For `failed_operations`: the action whose operations fail. */
  readonly action?: string | undefined;
  /** For `failed_operations`: only operations of projects in this region; absent: any. */
  readonly region_id?: string | undefined;
  /**
   * For `failed_operations`: the failure's text, with `{project_id}`, `{branch_id}`,
   * `{endpoint_id}`, `{operation_id}` and `{n}` (a random number) filled in for each failure.
   */
  readonly error?: string | undefined;
  /**
   * Probability that a matching request (or operation, for the operation kinds) is hit (default 1).
   */
  readonly rate?: number | undefined;
  /** Number of requests (operations) to hit, after which the fault is spent (default unlimited). */
  readonly count?: number | undefined;
}

export interface Fault extends FaultSpec {
  readonly id: string;
  /** How many requests (for the operation kinds, operations) it has hit so far. */
  readonly fired: number;
}

/** What the fault registry needs to know of a request besides its route and method. */
export interface RequestFacts {
  /** The request has a `cursor` query parameter. */
  readonly hasCursor: boolean;
  /** The project of the request's path, if it names one. */
  readonly projectId?: string | undefined;
}

/** What to do with one request: added latency, and at most one fault that decides the answer. */
export interface FaultDecision {
  readonly latencyMs: number;
  readonly fault: Fault | undefined;
}

const DEFAULT_FAULT_STATUS = 503;

const PLACEHOLDER_PATTERN = new RegExp(`\\{(${FAILURE_PLACEHOLDERS.join("|")})\\}`, "g");

interface Entry {
  readonly spec: FaultSpec;
  readonly id: string;
  fired: number;
}

/** The spec as listed: with the defaults of its kind filled in. */
function withDefaults(spec: FaultSpec): FaultSpec {
  switch (spec.kind) {
    case "status":
      return { ...spec, status: spec.status ?? DEFAULT_FAULT_STATUS };
    case "drip":
      return {
        ...spec,
        drip_bytes: spec.drip_bytes ?? DEFAULT_DRIP_BYTES,
        drip_interval_ms: spec.drip_interval_ms ?? DEFAULT_DRIP_INTERVAL_MS,
      };
    default:
      return spec;
  }
}

/** Whether a fault of this kind can hit a request of this route (route filter aside). */
export function kindHitsRoute(kind: FaultKind, route: string): boolean {
  if (OPERATION_FAULT_KINDS.includes(kind)) return false;
  const routes = FAULT_KIND_ROUTES[kind];
  return routes === undefined || routes.includes(route);
}

/**
 * The configured faults. For each API request, every matching latency fault adds its delay;
 * then the first other matching fault (in the order they were added) that fires decides the
 * answer. A `rate` draws from the simulator's seeded fault stream, so the same requests meet
 * the same faults under the same seed. `misdated` and `failed_operations` faults never match a
 * request: the model asks them (`misdateOffsetUs`, `operationFailure`) each time it creates an
 * operation or starts running one.
 */
export class FaultRegistry {
  private faults: Entry[] = [];
  private nextId = 1;

  constructor(private readonly random: SeededRandom) {}

  add(spec: FaultSpec): Fault {
    const entry: Entry = { spec: withDefaults(spec), id: `fault-${this.nextId++}`, fired: 0 };
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

  decide(route: string, method: string, facts: RequestFacts = { hasCursor: false }): FaultDecision {
    let latencyMs = 0;
    let decisive: Fault | undefined;
    for (const entry of this.faults) {
      const { spec } = entry;
      if (spec.route !== undefined && spec.route !== route) continue;
      if (spec.method !== undefined && spec.method !== method) continue;
      if (spec.project_id !== undefined && spec.project_id !== facts.projectId) continue;
      if (!kindHitsRoute(spec.kind, route)) continue;
      if (CURSOR_KINDS.has(spec.kind) && !facts.hasCursor) continue;
      if (spec.kind !== "latency" && decisive !== undefined) continue;
      if (!this.fires(entry)) continue;
      if (spec.kind === "latency") latencyMs += spec.latency_ms ?? 0;
      else decisive = view(entry);
    }
    return { latencyMs, fault: decisive };
  }

  /**
   * For an operation being created: the offset (microseconds) of its shown `created_at`, from
   * the first `misdated` fault that fires, or undefined. Draws only while such a fault is live.
   */
  misdateOffsetUs(): number | undefined {
    for (const entry of this.faults) {
      if (entry.spec.kind !== MISDATED) continue;
      if (this.fires(entry)) return secondsToMicros(entry.spec.offset_seconds ?? 0);
    }
    return undefined;
  }

  /**
   * For an operation whose course the model decides (not a scripted or a skipped one), as it
   * starts running: the error text it fails with, from the first live `failed_operations`
   * fault that matches its action, region and project and fires, or undefined. A fault that
   * does not match or is spent draws nothing.
   */
  operationFailure(operation: RunningOperation): string | undefined {
    for (const entry of this.faults) {
      const { spec } = entry;
      if (spec.kind !== FAILED_OPERATIONS || spec.action !== operation.action) continue;
      if (spec.region_id !== undefined && spec.region_id !== operation.regionId) continue;
      if (spec.project_id !== undefined && spec.project_id !== operation.projectId) continue;
      if (this.fires(entry)) return this.failureText(spec.error ?? "", operation);
    }
    return undefined;
  }

  /** The error template with the operation's ids and one drawn number (if it asks for one). */
  private failureText(template: string, operation: RunningOperation): string {
    const ids = operation.ids();
    const n = template.includes("{n}") ? String(this.random.int(FAILURE_NUMBER_BOUND)) : "";
    const values: Readonly<Record<(typeof FAILURE_PLACEHOLDERS)[number], string>> = {
      project_id: operation.projectId,
      branch_id: ids.branchId,
      endpoint_id: ids.endpointId ?? "",
      operation_id: ids.operationId,
      n,
    };
    return template.replace(
      PLACEHOLDER_PATTERN,
      (_match, name: keyof typeof values) => values[name],
    );
  }

  /** Counts a hit unless the fault is spent or its rate says no (one draw per rated check). */
  private fires(entry: Entry): boolean {
    const { spec } = entry;
    if (spec.count !== undefined && entry.fired >= spec.count) return false;
    if (spec.rate !== undefined && !(this.random.next() < spec.rate)) return false;
    entry.fired++;
    return true;
  }
}

/** `Retry-After` of a status fault: as configured, or 1 s for a 429 configured without one. */
export function faultRetryAfter(fault: FaultSpec): number | undefined {
  return fault.retry_after_seconds ?? (fault.status === 429 ? 1 : undefined);
}

export function isAnswerFault(kind: FaultKind | undefined): kind is AnswerFaultKind {
  return (ANSWER_FAULT_KINDS as readonly string[]).includes(kind ?? "");
}

function view(entry: Entry): Fault {
  return { ...entry.spec, id: entry.id, fired: entry.fired };
}
