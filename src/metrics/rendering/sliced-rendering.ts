/**
 * Writes the `/metrics` body from its families' texts, in order, in slices: the event loop runs
 * whenever a slice has taken `RENDER_SLICE_MS`, so a scrape never waits for a whole rendering.
 */
import type { Registry } from "prom-client";
import { systemClock } from "../../clock.js";
import { PAUSE, type Pause } from "../definitions/series.js";

/**
 * Longest stretch (ms) a sliced rendering works before it lets the event loop run: a scrape
 * that arrives during a rebuild waits for one slice, not for the whole rendering. Under a third
 * of the 10 ms a stall may last: a collection, or another process holding the core for a few
 * milliseconds, may fall inside a slice.
 */
export const RENDER_SLICE_MS = 3;

/** Pieces written between two looks at the clock: a project's text is one piece. */
const PIECES_PER_LOOK = 4;

/**
 * One family's part of the body, read when the rendering reaches it: either prom-client's own
 * rendering of one of its families (`registryFamilies`), or pieces of our own: a string is one
 * line (`text-format.ts`), without its new line; bytes are whole lines, each ending with its
 * new line (a project's lines kept from an earlier rendering, `project-chunks.ts`); `PAUSE`
 * writes nothing, and is a place to look at the clock (a family across projects yields one
 * after each project it sums). Pieces are written in slices, so a family of many series does
 * not hold the event loop for all of them. `rendering` numbers the rendering that reads the
 * family, so that its families can share what they read once per rendering.
 */
export type FamilyText = (rendering: number) => Promise<string> | Iterable<string | Buffer | Pause>;

/** Each family of a prom-client registry, in its order, rendered through its public API. */
export function registryFamilies(registry: Registry): FamilyText[] {
  return registry.getMetricsAsArray().map(
    ({ name }) =>
      () =>
        registry.getSingleMetricAsString(name),
  );
}

/**
 * Writes the families in the Prometheus text format (version 0.0.4), separated and ended as
 * prom-client's `Registry.metrics()` separates and ends them, in slices of about `sliceMs`,
 * letting the event loop run between them. Rendering everything in one turn of the event loop
 * would take several hundred milliseconds with 10,000 endpoints, in which no scrape (and no
 * other request) could be answered.
 *
 * Families read between two slices may come from moments a few milliseconds apart, which a
 * scrape of many families cannot tell from a change between two scrapes.
 */
export function slicedRendering(
  families: readonly FamilyText[],
  sliceMs = RENDER_SLICE_MS,
): SlicedRendering {
  // The previous body's size: the next one is written into one buffer of about that size.
  let lastBytes = 0;
  const bodies = new BodyBuffers();
  let renderings = 0;
  const render = async (): Promise<Buffer> => {
    const rendering = ++renderings;
    // Lines are encoded a few hundred at a time, so that no step handles the whole body at
    // once, straight into the body: no pieces to gather and copy once it is done.
    const body = new BodyBuffer(bodies, lastBytes);
    let pending: string[] = [];
    let sliceStarted = systemClock.monotonic();
    let pieces = 0;
    const write = (): void => {
      if (pending.length === 0) return;
      body.append(pending.join(""));
      pending = [];
    };
    const breathe = async (): Promise<void> => {
      if (systemClock.monotonic() - sliceStarted < sliceMs) return;
      write();
      await nextTurn();
      sliceStarted = systemClock.monotonic();
    };
    // prom-client joins a family's lines with "\n", the families with "\n\n", and ends with
    // "\n": every line here ends with its new line, an empty line separates two families, and
    // a family without lines is one empty line.
    for (const [i, family] of families.entries()) {
      if (i > 0) pending.push("\n");
      const text = family(rendering);
      if (text instanceof Promise) {
        pending.push(await text, "\n");
      } else {
        const before = pieces;
        for (const piece of text) {
          if (piece === PAUSE) {
            await breathe();
            continue;
          }
          if (typeof piece === "string") {
            pending.push(piece, "\n");
            if (pending.length >= 2048) write();
          } else {
            write();
            body.appendBytes(piece);
          }
          if (++pieces % PIECES_PER_LOOK === 0) await breathe();
        }
        if (pieces === before) pending.push("\n");
      }
      await breathe();
    }
    write();
    const done = body.done();
    lastBytes = done.length;
    return done;
  };
  return {
    render,
    recycle: (body) => {
      bodies.recycle(body);
    },
  };
}

export interface SlicedRendering {
  /** Writes the families' current text. */
  render(): Promise<Buffer>;
  /**
   * Takes back a body `render` returned that nobody reads any more: a later rendering may be
   * written into its buffer. Anything else is ignored.
   */
  recycle(body: Buffer): void;
}

/** Room a new body buffer has beyond the bytes expected. */
const HEADROOM = 65_536;

/**
 * The buffers bodies are written into: each one allocated here, and one of them, no longer
 * read, kept for the next body. Writing into new memory costs a page fault per 4 KiB, which on
 * a virtual machine takes longer than writing the body itself.
 */
class BodyBuffers {
  /** Every buffer allocated here (a body is a view of the first bytes of one). */
  readonly #ours = new WeakSet<ArrayBuffer>();
  #spare: Buffer | undefined;

  /**
   * A buffer for a body of about `bytes`: the spare one if it holds them and is not far larger,
   * or a new one with room to spare (a body that grows past it is copied into a larger one).
   */
  take(bytes: number): Buffer {
    const spare = this.#spare;
    this.#spare = undefined;
    if (spare !== undefined && spare.length >= bytes && spare.length <= 2 * bytes + HEADROOM) {
      return spare;
    }
    const buffer = Buffer.allocUnsafeSlow(Math.ceil(bytes * 1.02) + HEADROOM);
    this.#ours.add(buffer.buffer);
    return buffer;
  }

  recycle(body: Buffer): void {
    const memory = body.buffer;
    if (memory instanceof ArrayBuffer && this.#ours.has(memory)) {
      this.#spare = Buffer.from(memory);
    }
  }
}

/**
 * A body written in pieces into one buffer, sized from the previous body's size (which the
 * next one is usually close to) and grown by half when a piece does not fit. Holding the
 * pieces and copying them together at the end would allocate the body twice over.
 */
class BodyBuffer {
  readonly #buffers: BodyBuffers;
  #buffer: Buffer;
  #used = 0;

  constructor(buffers: BodyBuffers, expectedBytes: number) {
    this.#buffers = buffers;
    this.#buffer = buffers.take(expectedBytes);
  }

  append(text: string): void {
    this.#room(Buffer.byteLength(text));
    this.#used += this.#buffer.write(text, this.#used);
  }

  appendBytes(bytes: Buffer): void {
    this.#room(bytes.length);
    this.#used += bytes.copy(this.#buffer, this.#used);
  }

  /** Grows the buffer, if needed, so that `bytes` more fit. */
  #room(bytes: number): void {
    if (this.#used + bytes <= this.#buffer.length) return;
    const grown = this.#buffers.take(Math.max(this.#buffer.length * 1.5, this.#used + bytes));
    this.#buffer.copy(grown, 0, 0, this.#used);
    this.#buffers.recycle(this.#buffer);
    this.#buffer = grown;
  }

  /** The body written; a copy of its own when the buffer is much larger than it. */
  done(): Buffer {
    const body = this.#buffer.subarray(0, this.#used);
    if (this.#buffer.length - this.#used <= HEADROOM + this.#used / 16) return body;
    const own = this.#buffers.take(this.#used);
    body.copy(own);
    this.#buffers.recycle(this.#buffer);
    return own.subarray(0, this.#used);
  }
}

function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => {
    setImmediate(resolve);
  });
}
