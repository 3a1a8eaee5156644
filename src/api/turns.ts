/**
 * Turns of the event loop, handed out one at a time: `take()` resolves in a turn of its own,
 * after every turn taken before it. The client takes one before it reads each answer, so that a
 * burst of answers arriving together (a scheduler tick's polls) is parsed, validated and acted
 * on over as many turns, with the process's other I/O (a scrape of `/metrics`, the status page)
 * served between two of them, rather than in one stretch that holds the event loop for all.
 */
export class Turns {
  readonly #waiting: (() => void)[] = [];
  #scheduled = false;

  /** Resolves in the next turn not yet taken. */
  take(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#waiting.push(resolve);
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#waiting.length === 0) return;
    this.#scheduled = true;
    // An immediate queued while immediates run waits for the next turn: I/O is polled between.
    setImmediate(() => {
      this.#scheduled = false;
      this.#waiting.shift()?.();
      this.#schedule();
    });
  }
}
