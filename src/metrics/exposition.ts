/**
 * The cached `/metrics` body. Rendering walks every family, so it happens here, after changes
 * and on a slow refresh timer, never on a scrape: a scrape only writes the last buffer. The
 * body is written in slices (`sliced-rendering.ts`), so that a scrape arriving during a
 * rebuild is answered after one slice rather than after the whole rendering.
 */

/** What the HTTP server serves at `/metrics`. */
export interface Exposition {
  /** The current rendering of every metric, and its content type. */
  current(): { body: Buffer; contentType: string };
}

export interface ExpositionTiming {
  /** How long changes gather before a rebuild: many changes in a row make one rebuild. */
  readonly gatherMs: number;
  /** Longest time between two rebuilds, so that values read at render time stay fresh. */
  readonly refreshMs: number;
}

export const DEFAULT_TIMING: ExpositionTiming = { gatherMs: 250, refreshMs: 5000 };

/**
 * Share of the time rendering may take: after a rebuild that took d ms, changes gather for at
 * least 9·d ms, so that thousands of projects' series cannot keep the event loop busy.
 */
const MAX_RENDER_SHARE = 0.1;

const EMPTY = Buffer.alloc(0);

export class CachedExposition implements Exposition {
  readonly #render: () => Promise<string | Buffer>;
  readonly #contentType: string;
  readonly #timing: ExpositionTiming;
  readonly #onError: (error: unknown) => void;
  #body: Buffer | undefined;
  #gathering: NodeJS.Timeout | undefined;
  #refreshing: NodeJS.Timeout | undefined;
  #rendering: Promise<void> | undefined;
  #lastRenderMs = 0;
  #closed = false;

  /** Starts the first rendering at once; `onError` hears renderings that fail. */
  constructor(
    render: () => Promise<string | Buffer>,
    contentType: string,
    timing: ExpositionTiming,
    onError: (error: unknown) => void,
  ) {
    this.#render = render;
    this.#contentType = contentType;
    this.#timing = timing;
    this.#onError = onError;
    void this.refresh();
  }

  /**
   * The latest rendering. The first one is started by the constructor and completes within the
   * same turn of the event loop (every collector is synchronous, and a sliced rendering of a
   * body still small at construction needs one slice), so a scrape, which arrives in a
   * later turn, finds it; a caller in the very same turn gets an empty body.
   */
  current(): { body: Buffer; contentType: string } {
    return { body: this.#body ?? EMPTY, contentType: this.#contentType };
  }

  /** Something changed: rebuild once the changes of the next moments have gathered. */
  invalidate(): void {
    if (this.#closed || this.#gathering !== undefined) return;
    const delay = Math.max(
      this.#timing.gatherMs,
      (this.#lastRenderMs * (1 - MAX_RENDER_SHARE)) / MAX_RENDER_SHARE,
    );
    this.#gathering = setTimeout(() => void this.refresh(), delay).unref();
  }

  /** Rebuilds now; resolves once `current()` returns a rendering of the state as of this call. */
  refresh(): Promise<void> {
    clearTimeout(this.#gathering);
    this.#gathering = undefined;
    // One rendering at a time; one asked for during another starts after it, to see its changes.
    const next = (this.#rendering ?? Promise.resolve()).then(() => this.#rebuild());
    this.#rendering = next;
    void next.then(() => {
      if (this.#rendering === next) this.#rendering = undefined;
    });
    return next;
  }

  /** Stops the timers; `current()` keeps returning the last rendering. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#gathering);
    clearTimeout(this.#refreshing);
  }

  async #rebuild(): Promise<void> {
    const started = performance.now();
    try {
      const rendered = await this.#render();
      this.#body = typeof rendered === "string" ? Buffer.from(rendered) : rendered;
    } catch (error) {
      // The previous rendering stays: stale numbers beat no numbers, and the error is reported.
      this.#onError(error);
    }
    this.#lastRenderMs = performance.now() - started;
    // The refresh counts from the latest rebuild, whatever caused it: none is done twice.
    clearTimeout(this.#refreshing);
    if (!this.#closed) {
      this.#refreshing = setTimeout(() => void this.refresh(), this.#timing.refreshMs).unref();
    }
  }
}
