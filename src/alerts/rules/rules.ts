/**
 * Alert rules: which transitions become alerts, and to which sinks each alert goes. Pure: the
 * sync engine calls `alertsFor` while it builds a commit, so the alerts enter the outbox in
 * the same atomic write as the checkpoint that passes their operations.
 */
import { createHash } from "node:crypto";
import type { OutboxEntry } from "../../store/index.js";
import type { AlertedTo, RoutedAlerts, SilencedAlert } from "../../sync/poll-types.js";
import type { OperationSnapshot, Transition } from "../../sync/transitions.js";
import {
  MAX_ALSO_RESOLVES,
  OPT_IN_ALERT_KINDS,
  type Alert,
  type AlertKind,
} from "../../store/index.js";

export interface AlertRulesOptions {
  /** Raise `operation_failed` for cancelled operations too. */
  readonly cancelledIsFailure: boolean;
  /** Raise `operation_retrying` when `failures_count` grows (noisy; off by default). */
  readonly retrying: boolean;
  /** Raise `operation_recovered` when a failed or stuck operation finishes. */
  readonly recovered: boolean;
  /** Link template: `{project_id}`, `{operation_id}`, `{branch_id}`, `{endpoint_id}`. */
  readonly linkTemplate: string | undefined;
}

/** One routing condition: every list given must contain the alert's value. */
export interface RouteRule {
  readonly projects?: readonly string[] | undefined;
  readonly actions?: readonly string[] | undefined;
  readonly statuses?: readonly string[] | undefined;
  readonly kinds?: readonly AlertKind[] | undefined;
}

export interface SinkRoute {
  readonly name: string;
  /** An alert matching any of these is not sent to the sink (checked first). */
  readonly drop: readonly RouteRule[];
  /** When not empty, only alerts matching one of these are sent. */
  readonly match: readonly RouteRule[];
}

/**
 * A silence whose window is open now, as routing applies it: an alert its conditions match is
 * not sent to the sinks it covers (every sink, when `sinks` is undefined).
 */
export interface OpenSilence {
  readonly name: string;
  readonly match: RouteRule;
  readonly sinks: readonly string[] | undefined;
}

/** The stable id of an alert: the same transition never yields two different ids. */
export function alertId(
  kind: AlertKind,
  op: Pick<OperationSnapshot, "projectId" | "id" | "status" | "failuresCount">,
): string {
  return createHash("sha256")
    .update(JSON.stringify([op.projectId, op.id, kind, op.status, op.failuresCount]))
    .digest("hex")
    .slice(0, 32);
}

/** The alerts that `transitions` raise, in order. */
export function alertsFrom(
  transitions: readonly Transition[],
  detectedAtMs: number,
  options: AlertRulesOptions,
): Alert[] {
  const alerts: Alert[] = [];
  const seen = new Set<string>();
  const add = (kind: AlertKind, op: OperationSnapshot, resolves?: string): void => {
    const alert = toAlert(kind, op, detectedAtMs, options.linkTemplate, resolves);
    if (seen.has(alert.id)) return;
    seen.add(alert.id);
    alerts.push(alert);
  };
  for (const t of transitions) {
    switch (t.kind) {
      case "ended":
        if (
          t.status === "failed" ||
          t.status === "error" ||
          (t.status === "cancelled" && options.cancelledIsFailure)
        ) {
          // Named by the status it arrived at (a failure inferred from failures_count may be
          // seen only once the operation has moved on).
          add("operation_failed", { ...t.op, status: t.status });
        }
        break;
      case "stuck":
        add("operation_stuck", t.op);
        break;
      case "retried":
        if (options.retrying) add("operation_retrying", t.op);
        break;
      case "recovered":
        if (options.recovered) add("operation_recovered", t.op, resolvedId(t));
        break;
      case "new":
      case "status_changed":
        break;
    }
  }
  return alerts;
}

/**
 * Whether an alert goes to a sink: no drop rule holds, and a match rule does (or none is set).
 * An alert of an opt-in kind (`compute_advice`) goes only where a match rule names its kind.
 */
export function routes(route: SinkRoute, alert: Alert): boolean {
  if (route.drop.some((rule) => holds(rule, alert))) return false;
  if (OPT_IN_ALERT_KINDS.includes(alert.kind)) {
    return route.match.some(
      (rule) => rule.kinds?.includes(alert.kind) === true && holds(rule, alert),
    );
  }
  return route.match.length === 0 || route.match.some((rule) => holds(rule, alert));
}

/** What became of the alerts raised earlier for the operations (see `AlertContext`). */
export interface AlertHistory {
  /**
   * The alerts raised earlier for an operation still followed, with the sinks each went to and
   * those silences kept it from.
   */
  alerted(operationId: string): readonly AlertedTo[];
  /** Whether `sink` gave up on the alert `alertId`. */
  deadLettered(alertId: string, sink: string): boolean;
}

const NO_HISTORY: AlertHistory = { alerted: () => [], deadLettered: () => false };

/**
 * Outbox entries for `alerts`, each with the sinks it is routed to; unrouted ones are left out.
 * A recovery goes only to the sinks that were sent one of the alerts it resolves (earlier, by
 * `history`, or among `alerts`) and did not give up on it, and which also route the recovery: a
 * receiver never gets a `resolves` id it was not sent.
 */
export function outboxEntries(
  alerts: readonly Alert[],
  sinks: readonly SinkRoute[],
  nowMs: number,
  history: AlertHistory = NO_HISTORY,
): OutboxEntry[] {
  return [...routeAlerts(alerts, sinks, [], nowMs, history).entries];
}

/**
 * As `outboxEntries`, with the silences open now: a sink an open silence covers does not get
 * an alert the silence matches, and each such (alert, sink) is listed with the silence's name.
 * A recovery resolves every earlier alert of its operation (`resolves`, and `alsoResolves`: the
 * newest `MAX_ALSO_RESOLVES` others); each sink is sent those it got. A sink that got none of
 * them but where a silence kept one from is silenced by that silence (open or not).
 */
export function routeAlerts(
  alerts: readonly Alert[],
  sinks: readonly SinkRoute[],
  silences: readonly OpenSilence[],
  nowMs: number,
  history: AlertHistory = NO_HISTORY,
): RoutedAlerts {
  const entries: OutboxEntry[] = [];
  const silenced: SilencedAlert[] = [];
  /** Where each alert of this batch went, for a recovery later in the batch. */
  const now = new Map<string, AlertedTo>();
  /** The alerts of this batch by operation, oldest first. */
  const batchOf = new Map<string, string[]>();
  for (const raised of alerts) {
    let alert = raised;
    let routed = sinks.filter((s) => routes(s, alert)).map((s) => s.name);
    let silencedWith = new Map<string, string>();
    let bySink: Map<string, readonly string[]> | undefined;
    if (alert.resolves !== undefined) {
      const resolved = resolvedBy(alert, alert.resolves, history, now, batchOf);
      silencedWith = resolved.silenced;
      bySink = resolved.bySink;
      routed = routed.filter((sink) => bySink?.has(sink) === true || silencedWith.has(sink));
      alert = withAlsoResolves(alert, resolved.others);
    }
    const pending: string[] = [];
    const quiet: { sink: string; silence: string }[] = [];
    for (const sink of routed) {
      const silence =
        (bySink?.has(sink) === true ? undefined : silencedWith.get(sink)) ??
        silences.find(
          (s) => (s.sinks === undefined || s.sinks.includes(sink)) && holds(s.match, alert),
        )?.name;
      if (silence === undefined) pending.push(sink);
      else {
        quiet.push({ sink, silence });
        silenced.push({ alert, sink, silence });
      }
    }
    now.set(alert.id, { id: alert.id, sinks: pending, silenced: quiet });
    batchOf.set(alert.operationId, [...(batchOf.get(alert.operationId) ?? []), alert.id]);
    if (pending.length === 0) continue;
    const entry: OutboxEntry = { alert, createdAtMs: nowMs, pending };
    const resolvesBySink = narrowed(alert, pending, bySink);
    entries.push(resolvesBySink === undefined ? entry : { ...entry, resolvesBySink });
  }
  return { entries, silenced };
}

/**
 * What a recovery resolves: `resolves` and the other earlier alerts of its operation (earlier,
 * by `history`, or in this batch; newest first, at most `MAX_ALSO_RESOLVES`), with, per sink,
 * those the sink was sent and did not give up on (`resolves` first), and where silences kept
 * them from (with the silence's name; `resolves`'s first).
 */
function resolvedBy(
  recovery: Alert,
  resolves: string,
  history: AlertHistory,
  now: ReadonlyMap<string, AlertedTo>,
  batchOf: ReadonlyMap<string, readonly string[]>,
): {
  others: readonly string[];
  bySink: Map<string, readonly string[]>;
  silenced: Map<string, string>;
} {
  const earlier = new Map(history.alerted(recovery.operationId).map((a) => [a.id, a]));
  const ids = [...earlier.keys(), ...(batchOf.get(recovery.operationId) ?? [])];
  const others = [...new Set(ids.reverse())]
    .filter((id) => id !== resolves && id !== recovery.id)
    .slice(0, MAX_ALSO_RESOLVES);
  const bySink = new Map<string, string[]>();
  const silenced = new Map<string, string>();
  for (const id of [resolves, ...others]) {
    const went = [earlier.get(id), now.get(id)].filter((a) => a !== undefined);
    for (const sink of new Set(went.flatMap((a) => a.sinks))) {
      if (history.deadLettered(id, sink)) continue;
      bySink.set(sink, [...(bySink.get(sink) ?? []), id]);
    }
    for (const q of went.flatMap((a) => a.silenced ?? [])) {
      if (!silenced.has(q.sink)) silenced.set(q.sink, q.silence);
    }
  }
  return { others, bySink, silenced };
}

/** The recovery naming the other alerts it resolves, if any. */
function withAlsoResolves(alert: Alert, others: readonly string[]): Alert {
  const { alsoResolves: _before, ...rest } = alert;
  return others.length === 0 ? rest : { ...rest, alsoResolves: [...others] };
}

/** Per sink, the ids a recovery resolves there, when not every sink resolves all of them. */
function narrowed(
  alert: Alert,
  pending: readonly string[],
  bySink: ReadonlyMap<string, readonly string[]> | undefined,
): Record<string, string[]> | undefined {
  if (bySink === undefined || alert.resolves === undefined) return undefined;
  const all = [alert.resolves, ...(alert.alsoResolves ?? [])];
  const lists = pending.map((sink): [string, string[]] => [sink, [...(bySink.get(sink) ?? [])]]);
  if (lists.every(([, ids]) => ids.length === all.length)) return undefined;
  return Object.fromEntries(lists);
}

function holds(rule: RouteRule, alert: Alert): boolean {
  return (
    (rule.projects === undefined || projectsOf(alert).some((p) => rule.projects?.includes(p))) &&
    (rule.actions === undefined || rule.actions.includes(alert.action)) &&
    (rule.statuses === undefined || rule.statuses.includes(alert.status)) &&
    (rule.kinds === undefined || rule.kinds.includes(alert.kind))
  );
}

/** The projects an alert is about: a platform incident's are those it lists. */
function projectsOf(alert: Alert): readonly string[] {
  return alert.incident === undefined
    ? [alert.projectId]
    : alert.incident.projects.map((p) => p.id);
}

/** The id of the failure or stuck alert a recovery resolves. */
function resolvedId(t: Extract<Transition, { kind: "recovered" }>): string {
  const kind: AlertKind = t.after === "failed" ? "operation_failed" : "operation_stuck";
  return alertId(kind, { ...t.op, ...t.resolves });
}

function toAlert(
  kind: AlertKind,
  op: OperationSnapshot,
  detectedAtMs: number,
  linkTemplate: string | undefined,
  resolves: string | undefined,
): Alert {
  const alert: Alert = {
    id: alertId(kind, op),
    kind,
    projectId: op.projectId,
    operationId: op.id,
    action: op.action,
    status: op.status,
    failuresCount: op.failuresCount,
    createdAt: new Date(op.createdAtMs).toISOString(),
    updatedAt: new Date(op.updatedAtMs).toISOString(),
    durationSeconds: op.durationMs / 1000,
    detectedAt: new Date(detectedAtMs).toISOString(),
  };
  if (op.branchId !== undefined) alert.branchId = op.branchId;
  if (op.endpointId !== undefined) alert.endpointId = op.endpointId;
  if (op.error !== undefined) alert.error = op.error;
  if (linkTemplate !== undefined) alert.link = renderLink(linkTemplate, op);
  if (resolves !== undefined) alert.resolves = resolves;
  return alert;
}

function renderLink(template: string, op: OperationSnapshot): string {
  const values: Record<string, string> = {
    project_id: op.projectId,
    operation_id: op.id,
    branch_id: op.branchId ?? "",
    endpoint_id: op.endpointId ?? "",
  };
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in values ? encodeURIComponent(values[name] ?? "") : whole,
  );
}
