/**
 * The incident desk: decides, as each poll raises a failure, whether it joins or forms a
 * platform incident (`incidents.ts`), and tells the sinks of each incident through the outbox of
 * the project that carries it: that it opened, that it grew, that it resolved. Each of these is
 * one commit of the carrier's state (its record and the alert together), derived afresh from
 * every project's committed record on each pass, so that a crash between two commits is made
 * good by the next pass after the restart.
 *
 * The decisions of polls not yet committed are kept aside until their commits show them (or a
 * while has passed: a poll whose commit failed raises its failures again, and they are decided
 * the same way).
 *
 * Its times are stored (they outlive the process) but the window is a duration: the desk reads
 * the wall clock once, at its start, and follows the monotonic clock from there, so that a step
 * of the wall clock neither resolves an incident early nor keeps one open.
 */
import type { Clock } from "../../clock.js";
import { errorFields, type Logger } from "../../logger.js";
import {
  addToOutbox,
  type Alert,
  type IncidentMark,
  type IncidentRecord,
  type OutboxEntry,
} from "../../store/index.js";
import type { RoutedAlerts } from "../../sync/index.js";
import {
  boardLookup,
  carriedAfter,
  incidentAlert,
  incidentBoard,
  incidentKeyOf,
  incidentWork,
  markFailure,
  withRecent,
  type IncidentBoard,
  type IncidentSettings,
  type OpenIncident,
  type Placed,
  type ProjectIncidents,
} from "../rules/incidents.js";
import type { OutboxOwner } from "./notifier.js";

/** How long a decision waits for its poll's commit before it is forgotten. */
const PENDING_MS = 10 * 60_000;

export interface IncidentDeskOptions {
  readonly settings: IncidentSettings;
  /** The watched projects, whose records the incidents are derived from. */
  readonly projects: () => Iterable<OutboxOwner>;
  /** Routes an incident's alert to the sinks (undefined: there are none). */
  readonly route: () => ((alerts: readonly Alert[], nowMs: number) => RoutedAlerts) | undefined;
  readonly projectName: (projectId: string) => string | undefined;
  /** After an incident's alert entered the outbox of `projectId`: deliver it. */
  readonly raised?: (projectId: string) => void;
  readonly logger: Logger;
  readonly clock: Clock;
  /** How often the desk looks at the incidents (default 1 s). */
  readonly tickMs?: number;
}

export class IncidentDesk {
  #settings: IncidentSettings;
  readonly #pending = new Map<
    string,
    { readonly projectId: string; readonly mark: IncidentMark; readonly sinceMs: number }
  >();
  #timer: NodeJS.Timeout | undefined;
  #passing: Promise<void> | undefined;
  #open: readonly OpenIncident[] = [];
  /** The board as of the last pass, and the failures decided since. */
  #cached: IncidentBoard | undefined;
  #recent: Placed[] = [];

  /** The wall clock at the desk's start, and the monotonic clock then. */
  readonly #anchor: { readonly wall: number; readonly monotonic: number };

  constructor(private readonly options: IncidentDeskOptions) {
    this.#settings = options.settings;
    this.#anchor = { wall: options.clock.wall(), monotonic: options.clock.monotonic() };
  }

  /** Epoch ms as of the desk's start, advanced by the monotonic clock since. */
  #now(): number {
    return this.#anchor.wall + (this.options.clock.monotonic() - this.#anchor.monotonic);
  }

  /** A reload's settings, from the next decision on. */
  setSettings(settings: IncidentSettings): void {
    this.#settings = settings;
  }

  /**
   * The mark of a failure alert a poll raises now (`undefined`: it cannot join an incident),
   * with the incident it joins or forms. Called as the poll builds its commit.
   */
  consider(alert: Alert, regionId: string | undefined): IncidentMark | undefined {
    const key = incidentKeyOf(alert, regionId);
    if (key === undefined) return undefined;
    // The board of the last pass, with what was decided since: not derived again per failure.
    const board = this.#cached ?? this.#board();
    const mark = markFailure(
      withRecent(boardLookup(board), this.#recent),
      { projectId: alert.projectId, alertId: alert.id, key },
      this.#now(),
      this.#settings,
    );
    this.#pending.set(alert.id, {
      projectId: alert.projectId,
      mark,
      sinceMs: this.options.clock.monotonic(),
    });
    this.#recent.push({ ...mark, projectId: alert.projectId });
    return mark;
  }

  /** The incidents open now, oldest first (as of the last pass or decision). */
  active(): readonly OpenIncident[] {
    return this.#open;
  }

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
    const owners = new Map([...this.options.projects()].map((o) => [o.projectId, o]));
    const board = this.#board(owners.values());
    const nowMs = this.#now();
    const work = incidentWork(
      board,
      nowMs,
      this.#settings,
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
      if (owner === undefined) continue;
      const alert = incidentAlert(w, nowMs, this.options.projectName);
      // Silences are calendar rules, and the commit's time is for people: the wall clock's.
      const wallMs = this.options.clock.wall();
      const entries: readonly OutboxEntry[] = this.options.route()?.([alert], wallMs).entries ?? [];
      try {
        const committed = await owner.updateOutbox(wallMs, (state) => ({
          outbox: addToOutbox(state.outbox, entries).outbox,
          deadLetters: state.deadLetters,
          incidents: carriedAfter(state.incidents, w, nowMs),
        }));
        if (!committed) continue;
        if (entries.length > 0) this.options.raised?.(owner.projectId);
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
    this.#board(owners.values());
  }

  /** The board from the committed records and the decisions not yet committed. */
  #board(owners?: Iterable<OutboxOwner>): IncidentBoard {
    const records: ProjectIncidents[] = [];
    const committed = new Set<string>();
    for (const owner of owners ?? this.options.projects()) {
      const record = owner.state?.incidents;
      if (record === undefined) continue;
      records.push({ projectId: owner.projectId, record });
      for (const mark of record.marks) committed.add(mark.alertId);
    }
    const now = this.options.clock.monotonic();
    const pending = new Map<string, IncidentMark[]>();
    for (const [alertId, p] of this.#pending) {
      if (committed.has(alertId) || now - p.sinceMs > PENDING_MS) {
        this.#pending.delete(alertId);
        continue;
      }
      pending.set(p.projectId, [...(pending.get(p.projectId) ?? []), p.mark]);
    }
    for (const [projectId, marks] of pending) {
      const record: IncidentRecord = { marks, carried: [], resolved: [] };
      records.push({ projectId, record });
    }
    const board = incidentBoard(records, this.#settings);
    // Every decision not yet committed is among the records it was derived from.
    this.#cached = board;
    this.#recent = [];
    const nowMs = this.#now();
    this.#open = board.open.filter((i) => nowMs - i.lastAtMs < this.#settings.windowMs);
    return board;
  }
}
