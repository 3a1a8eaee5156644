/**
 * The bounds that keep the status page (and the tracker's memory) small at any number of
 * projects, and their defaults.
 */

/** The bounds that keep the page (and the tracker's memory) small at any number of projects. */
export interface StatusLimits {
  /** Recent failures remembered per project (newest kept). */
  readonly failuresKept: number;
  /** Project rows rendered; the others are counted in the summary only. */
  readonly projectRows: number;
  /** Open operations listed per project row. */
  readonly openShown: number;
  /** Recent failures listed per project row. */
  readonly failuresShown: number;
  /** Most recent dead letters listed (all projects). */
  readonly deadLettersShown: number;
  /** Longest free text (error messages) shown, in characters. */
  readonly textChars: number;
  /** A project whose newest failure is younger than this is listed among the problems. */
  readonly recentFailureMs: number;
  /** Recently silenced alerts remembered and listed (all projects, newest kept). */
  readonly silencedKept: number;
  /** Computes listed per project row (those with a failing probe or advice first). */
  readonly computesShown: number;
  /** Open platform incidents shown (the oldest); the others are counted. */
  readonly incidentsShown: number;
  /** Projects listed per platform incident (the first to join); the others are counted. */
  readonly incidentProjectsShown: number;
}

export const STATUS_LIMITS: StatusLimits = {
  failuresKept: 20,
  projectRows: 200,
  openShown: 5,
  failuresShown: 5,
  deadLettersShown: 10,
  textChars: 500,
  recentFailureMs: 3_600_000,
  silencedKept: 20,
  computesShown: 10,
  incidentsShown: 5,
  incidentProjectsShown: 20,
};
