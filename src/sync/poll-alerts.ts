/**
 * The alerts a poll raises: its alertable transitions handed to the alert hook (`alertsFor`),
 * and what each followed operation was alerted of since, so that its recovery follows its
 * failure to the same sinks.
 */
import { MAX_ALSO_RESOLVES, type ProjectState } from "../store/index.js";
import type { AlertedTo, PollOptions, RoutedAlerts } from "./poll-types.js";
import type { Transition } from "./transitions.js";

/**
 * Most alerts remembered per followed operation (the newest): as many as its recovery resolves
 * (`resolves` and `alsoResolves`).
 */
const ALERTED_KEPT = MAX_ALSO_RESOLVES + 1;

/**
 * The alerts the poll's alertable transitions raise (`alertsFor`), and what each followed
 * operation was alerted of since: where each alert went, and where silences kept it from.
 */
export function raiseAlerts(
  previous: ProjectState | undefined,
  alertable: readonly Transition[],
  nowMs: number,
  options: PollOptions,
  regionId: string | undefined,
): RoutedAlerts & { alerted: Map<string, AlertedTo[]> } {
  const alerted = new Map<string, AlertedTo[]>(
    (previous?.tracked ?? []).map((t) => [t.id, t.alerted ?? []]),
  );
  const deadLetters = new Set(
    (previous?.deadLetters ?? []).map((d) => JSON.stringify([d.alert.id, d.sink])),
  );
  const {
    entries: alerts,
    silenced,
    incidentMarks,
  } = options.alertsFor?.(alertable, {
    nowMs,
    alerted: (id) => alerted.get(id) ?? [],
    deadLettered: (alertId, sink) => deadLetters.has(JSON.stringify([alertId, sink])),
    regionId,
  }) ?? { entries: [], silenced: [] };
  // Where each alert went, and where silences kept it from: its recovery follows it.
  const silencedFrom = new Map<string, { sink: string; silence: string }[]>();
  for (const { alert, sink, silence } of silenced) {
    silencedFrom.set(alert.id, [...(silencedFrom.get(alert.id) ?? []), { sink, silence }]);
  }
  const raised = new Map([...alerts, ...silenced].map(({ alert }) => [alert.id, alert]));
  const pendingOf = new Map(alerts.map((e) => [e.alert.id, e.pending]));
  for (const alert of raised.values()) {
    const before = alerted.get(alert.operationId) ?? [];
    const quiet = silencedFrom.get(alert.id);
    const to: AlertedTo = {
      id: alert.id,
      sinks: pendingOf.get(alert.id) ?? [],
      ...(quiet === undefined ? {} : { silenced: quiet }),
    };
    alerted.set(alert.operationId, [...before, to].slice(-ALERTED_KEPT));
  }

  return {
    entries: alerts,
    silenced,
    alerted,
    ...(incidentMarks === undefined ? {} : { incidentMarks }),
  };
}
