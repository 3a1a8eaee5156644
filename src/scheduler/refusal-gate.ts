/**
 * What the API refuses, as the scheduler holds it (the backoff itself is `refusals.ts`): the
 * account's key, which while refused lets no job start but one probe at a time once its wait is
 * over, and each project's refusal, kept on its entry. `retry` ends every backoff at once, also
 * that of projects whose polls failed (`error-backoff.ts`).
 */
import type { Entry } from "./entry.js";
import { keyRefusalAfter, projectRefusalAfter, type Answer, type Refusal } from "./refusals.js";

export class RefusalGate {
  /** The API refuses the account's key: no job but one probe at a time, at `retryAtMs`. */
  private keyRefusal: Refusal | undefined;
  private probing = false;

  /** While the API refuses the account's key: since how many tries, and when the next is. */
  keyRefused(): Refusal | undefined {
    return this.keyRefusal;
  }

  /** The projects the API refuses now, with their backoff. */
  refusedProjects(entries: Iterable<Entry>): Map<string, Refusal> {
    const out = new Map<string, Refusal>();
    for (const e of entries) if (e.refusal !== undefined) out.set(e.id, e.refusal);
    return out;
  }

  /** The key is refused and its probe may not start now: one is in flight, or its wait is on. */
  probeWaits(now: number): boolean {
    return this.probing || now < (this.keyRefusal?.retryAtMs ?? 0);
  }

  probeStarted(): void {
    this.probing = true;
  }

  probeEnded(): void {
    this.probing = false;
  }

  /**
   * What a job's steps say of the key's and the project's refusal; a refusal waits `baseMs`,
   * doubled with each one in a row.
   */
  learn(
    entry: Entry,
    answers: readonly (Answer | undefined)[],
    now: number,
    baseMs: number,
    probe: boolean,
  ): void {
    this.keyRefusal = keyRefusalAfter(this.keyRefusal, answers, now, baseMs, probe);
    entry.refusal = projectRefusalAfter(entry.refusal, answers, now, baseMs);
  }

  /**
   * Ends every backoff: the key is probed at once, and the poll of each project refused or
   * backing off from failed polls is due now. Returns those projects, to be queued again.
   */
  retry(entries: Iterable<Entry>, now: number): Entry[] {
    if (this.keyRefusal !== undefined) this.keyRefusal = { ...this.keyRefusal, retryAtMs: now };
    const retried: Entry[] = [];
    for (const entry of entries) {
      if (entry.refusal === undefined && entry.errorBackoff === undefined) continue;
      entry.refusal = undefined;
      entry.errorBackoff = undefined;
      entry.nextPollMs = Math.min(entry.nextPollMs, now);
      retried.push(entry);
    }
    return retried;
  }
}
