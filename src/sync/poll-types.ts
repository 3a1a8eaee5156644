/**
 * What a poll takes and gives: the two reads it needs of the API (`OperationsSource`), its
 * options, the alert hook's contract (`RoutedAlerts`, `AlertContext`), and its result.
 */
import type { Operation, OperationsPage } from "../contract/index.js";
import type { Alert, IncidentMark, OutboxEntry, ProjectState, SpanRecord } from "../store/index.js";
import type { AnomalyCount } from "./anomalies.js";
import type { EndedAttempt } from "./attempts.js";
import type { TrackerOptions } from "./tracker.js";
import type { Transition } from "./transitions.js";

/** The two reads a poll needs; the API client provides them. */
export interface OperationsSource {
  listOperations(
    projectId: string,
    query: { limit: number; cursor?: string },
    options?: { signal?: AbortSignal },
  ): Promise<OperationsPage>;
  getOperation(
    projectId: string,
    operationId: string,
    options?: { signal?: AbortSignal },
  ): Promise<Operation>;
  /** The API's own time now (epoch ms), from its answers; undefined when it never said. */
  serverNow?(): number | undefined;
}

export interface PollOptions extends TrackerOptions {
  /** Page size of the first request of a walk from the top; small, since most polls stop there. */
  readonly firstPageLimit: number;
  /** Page size of every further request (the API allows up to 1000). */
  readonly pageLimit: number;
  /** Pages one poll may read before committing what it has as a catch-up segment. */
  readonly maxPagesPerPoll: number;
  /** First start: how far back to look for open operations to follow (nothing is counted). */
  readonly firstStartLookbackSeconds: number;
  /** First start: count operations created within this many seconds (0 = off). */
  readonly backfillSeconds: number;
  /** How far past now a record may be dated before it is taken as misdated (default 1 h). */
  readonly futureToleranceSeconds?: number;
  /**
   * Undocumented `action` and `status` values one project may keep as labels, each (default
   * 20); further ones become `other`.
   */
  readonly maxUnknownLabelValues?: number;
  /**
   * Turns a poll's transitions into alerts for the outbox (committed with the checkpoint).
   * History counted by a backfill is not handed over: it is not happening now.
   */
  readonly alertsFor?: (transitions: readonly Transition[], context: AlertContext) => RoutedAlerts;
  /** The project's region as read now (undefined while unknown: the committed one stands). */
  readonly regionOf?: (projectId: string) => string | undefined;
  /**
   * Turns the attempts a poll saw end into spans for the OpenTelemetry export, committed with
   * the checkpoint (history counted by a backfill included: every counted arrival is a span).
   * Absent: the export is off and nothing is queued.
   */
  readonly spansFor?: (attempts: readonly EndedAttempt[], context: SpanContext) => SpanRecord[];
}

/** What the span hook is told beside the attempts. */
export interface SpanContext {
  /** The project's region: as read now, else as committed; undefined while never read. */
  readonly regionId: string | undefined;
}

/** What the alert hook made of a poll's transitions. */
export interface RoutedAlerts {
  /** New alerts for the outbox, each with the sinks it goes to. */
  readonly entries: readonly OutboxEntry[];
  /** Each (alert, sink) an open silence kept from the sink (`silences:` in the config). */
  readonly silenced: readonly SilencedAlert[];
  /**
   * The failures that may group into a platform incident, each with the incident it joined:
   * committed with the alerts (`store/incident-record.ts`).
   */
  readonly incidentMarks?: readonly IncidentMark[];
}

/** An alert a silence kept from one sink. */
export interface SilencedAlert {
  readonly alert: Alert;
  readonly sink: string;
  /** The silence's name. */
  readonly silence: string;
}

export interface AlertContext {
  /** When the poll found the transitions (epoch ms). */
  readonly nowMs: number;
  /** The alerts raised earlier for an operation still followed, with the sinks each went to. */
  readonly alerted: (operationId: string) => readonly AlertedTo[];
  /** Whether `sink` gave up on the alert `alertId` (it is among the dead letters). */
  readonly deadLettered: (alertId: string, sink: string) => boolean;
  /** The project's region: as read now, else as committed; undefined while never read. */
  readonly regionId?: string | undefined;
}

/** An alert raised for an operation, and the sinks it was routed to. */
export interface AlertedTo {
  readonly id: string;
  readonly sinks: readonly string[];
  /** The sinks a silence kept it from, with the silence's name. */
  readonly silenced?: readonly { readonly sink: string; readonly silence: string }[] | undefined;
}

/**
 * Most alerts remembered per followed operation (the newest): as many as its recovery resolves
 * (`resolves` and `alsoResolves`).
 */

export interface PollResult {
  /**
   * The state to commit. Its outbox is the one the poll started from: the committer adds
   * `alerts` to the latest outbox (which deliveries may have changed meanwhile).
   */
  readonly state: ProjectState;
  /** New alerts for the outbox, raised by this poll's transitions. */
  readonly alerts: readonly OutboxEntry[];
  /** New spans for the span queue, one per attempt that ended (none while the export is off). */
  readonly spans: readonly SpanRecord[];
  /** Alerts this poll raised that silences kept from sinks (each alert once per sink). */
  readonly silenced: readonly SilencedAlert[];
  /** Its failures that may group into a platform incident (see `RoutedAlerts`). */
  readonly incidentMarks?: readonly IncidentMark[];
  readonly transitions: readonly Transition[];
  /** Requests made (pages and single reads). */
  readonly requests: number;
  /** A catch-up segment remains open after this poll. */
  readonly catchingUp: boolean;
  /** This poll walked from the newest record down to the checkpoint: nothing is left behind. */
  readonly caughtUp: boolean;
  /** This was the project's first poll (no committed state before it). */
  readonly firstStart: boolean;
  /** What the poll found odd in the answers and worked around, by kind. */
  readonly anomalies: readonly AnomalyCount[];
  /** The API's time (epoch ms) the poll measured the operations' ages against. */
  readonly serverNowMs: number;
  /**
   * When each operation this poll read was created (epoch ms, the API's clock), new or not, one
   * entry an operation, leaving out the control plane's periodic ones and any dated after the
   * API's now: the project's recent activity as its log shows it.
   */
  readonly activityMs: readonly number[];
}
