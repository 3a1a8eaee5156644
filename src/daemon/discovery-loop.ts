/**
 * Discovery of `all` and organisations: discovers the projects now, then again every interval
 * (sooner, within 10 s, after a failure), until stopped. A discovery that was under way when
 * the loop was stopped or restarted (a reload to a list of projects) does not apply what it
 * found.
 */

/** Discovers once; resolves whether it succeeded. `current()` is false once superseded. */
export type Discover = (current: () => boolean) => Promise<boolean>;

/** How soon a discovery is tried again after one that failed, at most. */
const RETRY_MS = 10_000;

export class DiscoveryLoop {
  #timer: NodeJS.Timeout | undefined;
  /** Counts starts and stops: a discovery applies only while its generation is the latest. */
  #generation = 0;
  #running = false;
  #intervalMs = 0;

  constructor(private readonly discover: Discover) {}

  get running(): boolean {
    return this.#running;
  }

  /** Discovers now, and from then on every `intervalSeconds`; resolves after the first. */
  async start(intervalSeconds: number): Promise<void> {
    this.stop();
    this.#running = true;
    this.#intervalMs = intervalSeconds * 1000;
    const generation = this.#generation;
    const ok = await this.discover(() => generation === this.#generation);
    if (generation === this.#generation) this.#schedule(ok);
  }

  /** Keeps discovering, at a new interval from now on. */
  setInterval(intervalSeconds: number): void {
    if (!this.#running || intervalSeconds * 1000 === this.#intervalMs) return;
    this.#intervalMs = intervalSeconds * 1000;
    this.#schedule(true);
  }

  stop(): void {
    this.#generation += 1;
    this.#running = false;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(ok: boolean): void {
    const delay = ok ? this.#intervalMs : Math.min(RETRY_MS, this.#intervalMs);
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    const generation = this.#generation;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.discover(() => generation === this.#generation).then((done) => {
        if (generation === this.#generation) this.#schedule(done);
      });
    }, delay);
    this.#timer.unref();
  }
}
