/**
 * The incident desk: tells the sinks of each platform incident through the outbox of the
 * project that carries it: that it opened, that it grew, that it resolved. Each of these is one
 * commit of the carrier's state (its record and the alert together), derived afresh from every
 * project's committed record on each pass (`IncidentLedger`), so that a crash between two
 * commits is made good by the next pass after the restart. It owns one timer, its pass.
 *
 * With traces exported, the commit that records an incident's resolution also queues its span
 * (`incident-span.ts`) in the carrier's span queue: the resolution is committed once (the record
 * remembers it, and no pass resolves it again), so the span is queued once, and survives a crash
 * like the rest of the state.
 */
import type { Clock } from "../../clock.js";
import { errorFields, type Logger } from "../../logger.js";
import {
  addToOutbox,
  addToSpanQueue,
  type IncidentSpan,
  type ProjectState,
  type QueuedSpan,
  type SpanDeadLetter,
} from "../../store/index.js";
import { incidentSpan } from "../rules/incident-span.js";
import {
  carriedAfter,
  incidentAlert,
  incidentWork,
  type IncidentWork,
} from "../rules/incidents.js";
import type { IncidentLedger } from "./incident-ledger.js";
import type { AlertIntake } from "./intake.js";
import type { OutboxOwner } from "./sink-lane.js";

export interface IncidentDeskOptions {
  readonly ledger: IncidentLedger;
  /** Where the incidents' alerts enter the pipeline. */
  readonly intake: AlertIntake;
  /** The watched projects, whose records the incidents are derived from. */
  readonly projects: () => Iterable<OutboxOwner>;
  readonly projectName: (projectId: string) => string | undefined;
  readonly logger: Logger;
  readonly clock: Clock;
  /** How often the desk looks at the incidents (default 1 s). */
  readonly tickMs?: number;
  /** Queue each incident's span as it resolves (the OpenTelemetry export's traces are on). */
  readonly queueSpans?: boolean;
}

export class IncidentDesk {
  #timer: NodeJS.Timeout | undefined;
  #passing: Promise<void> | undefined;

  constructor(private readonly options: IncidentDeskOptions) {}

  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => {
      void this.pass();
    }, this.options.tickMs ?? 1000);
    this.#timer.unref();
  }

  /** Stops the timer and waits for a pass under way. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#passing;
  }

  /** Looks at the incidents once (one pass at a time), telling the sinks what is due. */
  async pass(): Promise<void> {
    if (this.#passing !== undefined) return this.#passing;
    this.#passing = this.#pass().finally(() => {
      this.#passing = undefined;
    });
    return this.#passing;
  }

  async #pass(): Promise<void> {
    const { ledger } = this.options;
    const owners = new Map([...this.options.projects()].map((o) => [o.projectId, o]));
    const board = ledger.board(owners.values());
    const nowMs = ledger.now();
    const work = incidentWork(
      board,
      nowMs,
      ledger.settings,
      (projectId) => owners.get(projectId)?.state !== undefined,
      (carrier, incidentId) =>
        (owners.get(carrier)?.state?.outbox ?? []).some(
          (e) =>
            e.alert.kind === "platform_incident" &&
            e.alert.operationId === incidentId &&
            e.alert.status === "updated",
        ),
    );
    for (const w of work) {
      const owner = owners.get(w.carrier);
      if (owner !== undefined) await this.#tell(owner, w, nowMs);
    }
    ledger.board(owners.values());
  }

  /** Submits one incident's alert, committed with the carrier's record in one write. */
  async #tell(owner: OutboxOwner, w: IncidentWork, nowMs: number): Promise<void> {
    const alert = incidentAlert(w, nowMs, this.options.projectName);
    // Its end is the resolution's time, as the carrier's record keeps it.
    const span =
      w.state === "resolved" && this.options.queueSpans === true
        ? incidentSpan(w.incident, nowMs)
        : undefined;
    // Whether a full queue refused the span: known in the commit's change (the latest state).
    const queueing = { dropped: false };
    try {
      const committed = await this.options.intake.submit(
        owner.projectId,
        [alert],
        // The commit's time is for people: the wall clock's.
        (entries, wallMs) =>
          owner.updateOutbox(wallMs, (state) => {
            const queued = span === undefined ? undefined : withSpan(state, span, wallMs);
            queueing.dropped = queued?.dropped === true;
            return {
              outbox: addToOutbox(state.outbox, entries).outbox,
              deadLetters: state.deadLetters,
              incidents: carriedAfter(state.incidents, w, nowMs),
              ...(queued === undefined ? {} : { spanQueue: queued.spanQueue }),
            };
          }),
      );
      if (!committed) return;
      if (queueing.dropped) {
        this.options.logger.warn(
          { project: owner.projectId, incident: w.incident.id },
          "the span queue is full: the platform incident's span was dropped",
        );
      }
      this.options.logger.info(
        {
          incident: w.incident.id,
          state: w.state,
          action: w.incident.key.action,
          region: w.incident.key.regionId,
          projects: w.incident.projectCount,
        },
        `platform incident ${w.state}`,
      );
    } catch (error) {
      // Tried again at the next pass: the records still say what is due.
      this.options.logger.error(
        { incident: w.incident.id, ...errorFields(error) },
        "could not commit a platform incident's alert",
      );
    }
  }
}

/** The carrier's span queue with `span` added (not when it is full: then `dropped`). */
function withSpan(
  state: ProjectState,
  span: IncidentSpan,
  wallMs: number,
): {
  readonly spanQueue: { readonly queue: QueuedSpan[]; readonly deadLetters: SpanDeadLetter[] };
  readonly dropped: boolean;
} {
  const { queue, dropped } = addToSpanQueue(state.spans ?? [], [{ span, queuedAtMs: wallMs }]);
  return {
    spanQueue: { queue, deadLetters: state.spanDeadLetters ?? [] },
    dropped: dropped.length > 0,
  };
}
