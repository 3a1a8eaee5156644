/**
 * The firing set: alerts a sink keeps re-sending while they fire (an Alertmanager resolves an
 * alert that is not re-sent). It is part of the state document, committed like the outbox, so
 * that it survives restarts, `kill -9` and a takeover by another replica.
 *
 * An alert enters the set when its sink acknowledges it. It ends when its operation recovers
 * (the recovery is delivered through the outbox and resolves it, with the operation's other
 * alerts it names in `alsoResolves`), when a newer alert of its operation takes its place (a
 * stuck operation that failed, a failed one retried), or when it has fired for the sink's
 * `firingFor` without an end. An ended alert is sent once more, with its
 * end time, and then leaves the set.
 *
 * A platform incident's alerts (its `operationId` is the incident's id) are one alert to the
 * sink, under the same labels: a newer one (an update) replaces the older in the set, which
 * leaves without ending (ending it would send it with an end under those labels, resolving the
 * incident), and its resolution, which the sink sent resolved, removes them and does not enter.
 * An incident nothing updates or resolves for `firingFor` ends as any alert does.
 */
import { z } from "zod";
import { alertSchema, resolvedIds, type Alert } from "./alert-record.js";

export const firingAlertSchema = z.object({
  /** The sink that re-sends it. */
  sink: z.string(),
  alert: alertSchema,
  /** When the sink first acknowledged it (epoch ms). */
  sinceMs: z.number(),
  /** When it ended (epoch ms): it is sent once more with this end, then dropped. */
  endedAtMs: z.number().optional(),
});
export type FiringAlert = z.infer<typeof firingAlertSchema>;

/**
 * Alerts that fire until they end; a recovery only ends what it resolves, and a resolved
 * platform incident was sent resolved.
 */
function fires(alert: Alert): boolean {
  if (alert.kind === "platform_incident") return !isResolution(alert);
  return alert.kind !== "operation_recovered";
}

/** A platform incident's resolution (its state, or its status for an alert without one). */
function isResolution(alert: Alert): boolean {
  return (alert.incident?.state ?? alert.status) === "resolved";
}

function same(a: FiringAlert, sink: string, alertId: string): boolean {
  return a.sink === sink && a.alert.id === alertId;
}

/**
 * The set after `sink` acknowledged `alerts` at `nowMs`: firing alerts join it, each ending the
 * earlier alerts of its operation; a recovery removes the alerts it resolves (which the sink
 * sent resolved with it) and ends the rest of its operation's; a platform incident's alert
 * takes the place of its incident's earlier ones.
 */
export function acknowledgeFiring(
  firing: readonly FiringAlert[],
  sink: string,
  alerts: readonly Alert[],
  nowMs: number,
): FiringAlert[] {
  let next = [...firing];
  for (const alert of alerts) {
    if (alert.kind === "platform_incident") {
      next = acknowledgeIncident(next, sink, alert, nowMs);
      continue;
    }
    if (alert.kind === "operation_recovered") {
      const resolved = resolvedIds(alert);
      // Resolved by the recovery itself; the operation's other alerts end with it.
      next = next.filter((f) => !resolved.some((id) => same(f, sink, id)));
      next = endOperation(next, sink, alert.operationId, Date.parse(alert.detectedAt));
      continue;
    }
    if (!fires(alert) || next.some((f) => same(f, sink, alert.id))) continue;
    // One alert of an operation fires at a time: the newest says where it stands.
    next = endOperation(next, sink, alert.operationId, Date.parse(alert.detectedAt));
    next.push({ sink, alert, sinceMs: nowMs });
  }
  return next;
}

/**
 * The set after `sink` acknowledged an alert of a platform incident: the incident's earlier
 * alerts leave it (not ended: the sink sends the incident under the same labels), and the newest
 * enters unless it is the resolution. An update older than one in the set changes nothing.
 */
function acknowledgeIncident(
  firing: readonly FiringAlert[],
  sink: string,
  alert: Alert,
  nowMs: number,
): FiringAlert[] {
  const ofIncident = (f: FiringAlert): boolean =>
    f.sink === sink &&
    f.alert.kind === "platform_incident" &&
    f.alert.operationId === alert.operationId;
  const rest = firing.filter((f) => !ofIncident(f));
  if (!fires(alert)) return rest;
  const detectedMs = Date.parse(alert.detectedAt);
  const newer = firing.some(
    (f) => ofIncident(f) && f.alert.id !== alert.id && Date.parse(f.alert.detectedAt) > detectedMs,
  );
  if (newer || firing.some((f) => same(f, sink, alert.id))) return [...firing];
  return [...rest, { sink, alert, sinceMs: nowMs }];
}

function endOperation(
  firing: readonly FiringAlert[],
  sink: string,
  operationId: string,
  atMs: number,
): FiringAlert[] {
  return firing.map((f) =>
    f.sink === sink && f.alert.operationId === operationId && f.endedAtMs === undefined
      ? { ...f, endedAtMs: Number.isFinite(atMs) ? atMs : f.sinceMs }
      : f,
  );
}

/** Ends the alerts of `sink` that have fired for `firingForMs` (they are sent once more). */
export function expireFiring(
  firing: readonly FiringAlert[],
  sink: string,
  firingForMs: number,
  nowMs: number,
): FiringAlert[] {
  return firing.map((f) =>
    f.sink === sink && f.endedAtMs === undefined && nowMs - f.sinceMs >= firingForMs
      ? { ...f, endedAtMs: f.sinceMs + firingForMs }
      : f,
  );
}

/** The set after `sink` has been told of the ended alerts `sent`: they leave it. */
export function settleEnded(
  firing: readonly FiringAlert[],
  sink: string,
  sent: readonly FiringAlert[],
): FiringAlert[] {
  const ended = new Set(sent.filter((f) => f.endedAtMs !== undefined).map((f) => f.alert.id));
  return firing.filter((f) => !(f.sink === sink && ended.has(f.alert.id)));
}
