/**
 * The cached `/metrics` body: rebuilt after changes and on a slow timer, never on a scrape, so a
 * scrape only writes the last rendering's buffer, plain or gzip.
 */
import { gzipBody, gzipBodyNow } from "./compressed-body.js";
import { systemClock } from "../../clock.js";

/** One rendering of every metric: its body, the same body compressed, and its content type. */
export interface Rendering {
  readonly body: Buffer;
  /** `body` in gzip, compressed once when the rendering was built. */
  readonly gzip: Buffer;
  readonly contentType: string;
}

/** What the HTTP server serves at `/metrics`. */
export interface Exposition {
  /** The current rendering, unchanged for as long as the caller keeps it. */
  current(): Rendering;
  /**
   * The current rendering, lent for one response: once `release` is called (when the response
   * is done, sent or aborted), a later rendering may be written into its buffers, so they must
   * not be read after that. Writing into a buffer already in memory spares the pages of a new
   * one, which cost more than the writing itself on a virtual machine.
   */
  lend(): LentRendering;
}

export interface LentRendering {
  readonly rendering: Rendering;
  /** The rendering is no longer read; a second call does nothing. */
  readonly release: () => void;
}

/** A published rendering, and who may still read it. */
interface Published {
  readonly rendering: Rendering;
  /** Responses still sending it. */
  lent: number;
  /** Returned by `current()`: its reader may keep it for ever, so it is never recycled. */
  kept: boolean;
  /** A later rendering replaced it (once given back by every response, it is recycled). */
  retired: boolean;
}

export interface ExpositionTiming {
  /** How long changes gather before a rebuild: many changes in a row make one rebuild. */
  readonly gatherMs: number;
  /** Longest time between two rebuilds, so that values read at render time stay fresh. */
  readonly refreshMs: number;
}

export const DEFAULT_TIMING: ExpositionTiming = { gatherMs: 250, refreshMs: 5000 };

/**
 * Share of the time rebuilding may take: after a rebuild (rendering and compressing) that took
 * d ms, changes gather for at least 9·d ms, so that thousands of projects' series cannot keep
 * the process busy.
 */
const MAX_RENDER_SHARE = 0.1;

const EMPTY = Buffer.alloc(0);
const EMPTY_GZIP = gzipBodyNow(EMPTY);

/**
 * Rendering walks every family, so it happens here. The body is written in slices
 * (`sliced-rendering.ts`), so that a scrape arriving during a rebuild is answered after one
 * slice rather than after the whole rendering. Each rendering is also compressed once, off the
 * event loop (`compressed-body.ts`), and the plain body and its gzip form are published
 * together: a scrape gets one or the other of the same rendering. A scrape borrows the
 * rendering it sends and gives it back when its response is done; a replaced rendering that
 * every scrape has given back is handed to `recycle`, so that a later rendering is written into
 * its buffer rather than into new memory.
 */
export class CachedExposition implements Exposition {
  readonly #render: () => Promise<string | Buffer>;
  readonly #contentType: string;
  readonly #timing: ExpositionTiming;
  readonly #onError: (error: unknown) => void;
  readonly #compress: (body: Buffer) => Promise<Buffer>;
  readonly #recycle: ((body: Buffer) => void) | undefined;
  #published: Published;
  #gathering: NodeJS.Timeout | undefined;
  #refreshing: NodeJS.Timeout | undefined;
  #rebuilding: Promise<void> | undefined;
  #lastRebuildMs = 0;
  #closed = false;

  /**
   * Starts the first rendering at once; `onError` hears renderings (or compressions) that fail.
   * `compress` makes a rendering's gzip form (the default: `gzipBody`). `recycle`, when given,
   * is handed each body that nobody reads any more (replaced, and neither sending nor kept),
   * for `render` to write a later rendering into.
   */
  constructor(
    render: () => Promise<string | Buffer>,
    contentType: string,
    timing: ExpositionTiming,
    onError: (error: unknown) => void,
    compress: (body: Buffer) => Promise<Buffer> = gzipBody,
    recycle?: (body: Buffer) => void,
  ) {
    this.#render = render;
    this.#contentType = contentType;
    this.#timing = timing;
    this.#onError = onError;
    this.#compress = compress;
    this.#recycle = recycle;
    this.#published = published({ body: EMPTY, gzip: EMPTY_GZIP, contentType });
    void this.refresh();
  }

  /**
   * The latest rendering, published once both its forms are built. The first one is started by
   * the constructor and is published once compressed, a few milliseconds later; until then
   * the body is empty (`refresh()` resolves once a rendering is published).
   */
  current(): Rendering {
    this.#published.kept = true;
    return this.#published.rendering;
  }

  lend(): LentRendering {
    const lent = this.#published;
    lent.lent += 1;
    let released = false;
    return {
      rendering: lent.rendering,
      release: () => {
        if (released) return;
        released = true;
        lent.lent -= 1;
        this.#recycleIfUnread(lent);
      },
    };
  }

  /** Something changed: rebuild once the changes of the next moments have gathered. */
  invalidate(): void {
    if (this.#closed || this.#gathering !== undefined) return;
    const delay = Math.max(
      this.#timing.gatherMs,
      (this.#lastRebuildMs * (1 - MAX_RENDER_SHARE)) / MAX_RENDER_SHARE,
    );
    this.#gathering = setTimeout(() => void this.refresh(), delay).unref();
  }

  /** Rebuilds now; resolves once `current()` returns a rendering of the state as of this call. */
  refresh(): Promise<void> {
    clearTimeout(this.#gathering);
    this.#gathering = undefined;
    // One rendering at a time; one asked for during another starts after it, to see its changes.
    const next = (this.#rebuilding ?? Promise.resolve()).then(() => this.#rebuild());
    this.#rebuilding = next;
    void next.then(() => {
      if (this.#rebuilding === next) this.#rebuilding = undefined;
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
    const started = systemClock.monotonic();
    // On any failure the previous rendering stays: stale numbers beat no numbers, and the
    // error is reported.
    let body: Buffer | undefined;
    try {
      const rendered = await this.#render();
      body = typeof rendered === "string" ? Buffer.from(rendered) : rendered;
    } catch (error) {
      this.#onError(error);
    }
    if (body !== undefined) {
      // Off the event loop, but on the process's CPU: it counts in the rebuild's share.
      try {
        const gzip = await this.#compress(body);
        const replaced = this.#published;
        this.#published = published({ body, gzip, contentType: this.#contentType });
        replaced.retired = true;
        this.#recycleIfUnread(replaced);
      } catch (error) {
        this.#onError(error);
      }
    }
    this.#lastRebuildMs = systemClock.monotonic() - started;
    // The refresh counts from the latest rebuild, whatever caused it: none is done twice.
    clearTimeout(this.#refreshing);
    if (!this.#closed) {
      this.#refreshing = setTimeout(() => void this.refresh(), this.#timing.refreshMs).unref();
    }
  }

  #recycleIfUnread(p: Published): void {
    // Reached once: a retired rendering is lent no more, so `lent` falls to 0 only once.
    if (!p.retired || p.lent > 0 || p.kept) return;
    if (p.rendering.body !== EMPTY) this.#recycle?.(p.rendering.body);
  }
}

function published(rendering: Rendering): Published {
  return { rendering, lent: 0, kept: false, retired: false };
}
