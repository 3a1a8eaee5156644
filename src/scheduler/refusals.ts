/**
 * Backoff for what the API refuses, as pure decisions: a project whose operations log answers
 * 404 or 403 (gone, or not readable with this key) and an account whose key answers 401. Each
 * is tried again after a delay that starts at one poll interval and doubles with every refusal
 * in a row, up to a cap, instead of at the full rate; an answer ends it. A refused key holds
 * every job of its account back but one probe at a time.
 */

/** The longest wait between two tries of something refused. */
export const REFUSAL_CAP_MS = 600_000;

/** What the API refused: one project's log, or the account's key itself. */
export type RefusalKind = "project" | "key";

export interface Refusal {
  /** Refused tries in a row. */
  readonly count: number;
  /** When to try again (monotonic ms). */
  readonly retryAtMs: number;
}

/** The wait after the `count`-th refusal in a row: `baseMs` doubled each time, up to the cap. */
export function refusalDelayMs(count: number, baseMs: number, capMs = REFUSAL_CAP_MS): number {
  return Math.min(capMs, Math.max(1, baseMs) * 2 ** Math.max(0, count - 1));
}

/** The refusal after one more refused try at `nowMs`. */
export function refusedAgain(
  previous: Refusal | undefined,
  nowMs: number,
  baseMs: number,
  capMs = REFUSAL_CAP_MS,
): Refusal {
  const count = (previous?.count ?? 0) + 1;
  return { count, retryAtMs: nowMs + refusalDelayMs(count, baseMs, capMs) };
}

/** What one step of a job says of refusals: the API refused something, or answered. */
export interface Answer {
  readonly refused?: RefusalKind;
  readonly answered?: boolean;
}

/**
 * The key's refusal after a job: refused once more when a step says so (once it is refused,
 * jobs that started before say nothing new: only a probe counts), ended when one is answered.
 */
export function keyRefusalAfter(
  previous: Refusal | undefined,
  answers: readonly (Answer | undefined)[],
  nowMs: number,
  baseMs: number,
  probe: boolean,
): Refusal | undefined {
  if (answers.some((a) => a?.refused === "key")) {
    return previous === undefined || probe ? refusedAgain(previous, nowMs, baseMs) : previous;
  }
  return answers.some((a) => a?.answered === true) ? undefined : previous;
}

/** The project's refusal after a job: refused once more, or ended by a step not refused. */
export function projectRefusalAfter(
  previous: Refusal | undefined,
  answers: readonly (Answer | undefined)[],
  nowMs: number,
  baseMs: number,
): Refusal | undefined {
  if (answers.some((a) => a?.refused === "project")) return refusedAgain(previous, nowMs, baseMs);
  return answers.some((a) => a !== undefined && a.refused === undefined) ? undefined : previous;
}
