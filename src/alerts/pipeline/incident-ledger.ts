/**
 * The incident ledger: decides, as each poll raises a failure, whether it joins or forms a
 * platform incident (`incidents.ts`), over the board derived from every project's committed
 * record and the decisions of polls not yet committed. The incident desk reads the same board
 * to tell the sinks of each incident.
 *
 * The decisions of polls not yet committed are kept aside until their commits show them (or a
 * while has passed: a poll whose commit failed raises its failures again, and they are decided
 * the same way).
 *
 * Its times are stored (they outlive the process) but the window is a duration: the ledger
 * reads the wall clock once, at its start, and follows the monotonic clock from there, so that a
 * step of the wall clock neither resolves an incident early nor keeps one open.
 */
import type { Clock } from "../../clock.js";
import type { Alert, IncidentMark, IncidentRecord } from "../../store/index.js";
import {
  boardLookup,
  incidentBoard,
  incidentKeyOf,
  markFailure,
  withRecent,
  type IncidentBoard,
  type IncidentSettings,
  type OpenIncident,
  type Placed,
  type ProjectIncidents,
} from "../rules/incidents.js";
import { failedAttempt } from "../rules/incident-span.js";
import type { OutboxOwner } from "./sink-lane.js";

/** How long a decision waits for its poll's commit before it is forgotten. */
const PENDING_MS = 10 * 60_000;

export interface IncidentLedgerOptions {
  readonly settings: IncidentSettings;
  /** The watched projects, whose records the incidents are derived from. */
  readonly projects: () => Iterable<OutboxOwner>;
  readonly clock: Clock;
}

export class IncidentLedger {
  #settings: IncidentSettings;
  readonly #pending = new Map<
    string,
    { readonly projectId: string; readonly mark: IncidentMark; readonly sinceMs: number }
  >();
  #open: readonly OpenIncident[] = [];
  /** The board as of the last derivation, and the failures decided since. */
  #cached: IncidentBoard | undefined;
  #recent: Placed[] = [];
  /** The wall clock at the ledger's start, and the monotonic clock then. */
  readonly #anchor: { readonly wall: number; readonly monotonic: number };

  constructor(private readonly options: IncidentLedgerOptions) {
    this.#settings = options.settings;
    this.#anchor = { wall: options.clock.wall(), monotonic: options.clock.monotonic() };
  }

  get settings(): IncidentSettings {
    return this.#settings;
  }

  /** A reload's settings, from the next decision on. */
  setSettings(settings: IncidentSettings): void {
    this.#settings = settings;
  }

  /** Epoch ms as of the ledger's start, advanced by the monotonic clock since. */
  now(): number {
    return this.#anchor.wall + (this.options.clock.monotonic() - this.#anchor.monotonic);
  }

  /**
   * The mark of a failure alert a poll raises now (`undefined`: it cannot join an incident),
   * with the incident it joins or forms and the operation attempt that failed (the incident
   * span's link to it). Called as the poll builds its commit.
   */
  consider(alert: Alert, regionId: string | undefined): IncidentMark | undefined {
    const key = incidentKeyOf(alert, regionId);
    if (key === undefined) return undefined;
    // The board of the last derivation, with what was decided since: not derived per failure.
    const board = this.#cached ?? this.board();
    const mark = markFailure(
      withRecent(boardLookup(board), this.#recent),
      { projectId: alert.projectId, alertId: alert.id, key, attempt: failedAttempt(alert) },
      this.now(),
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

  /** The incidents open now, oldest first (as of the last derivation or decision). */
  active(): readonly OpenIncident[] {
    return this.#open;
  }

  /** The board from the committed records of `owners` and the decisions not yet committed. */
  board(owners?: Iterable<OutboxOwner>): IncidentBoard {
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
    const nowMs = this.now();
    this.#open = board.open.filter((i) => nowMs - i.lastAtMs < this.#settings.windowMs);
    return board;
  }
}
