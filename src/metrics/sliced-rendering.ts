/**
 * Writes the `/metrics` body from its families in slices: prom-client's renderings of the
 * families it counts, and the lines of our own of the projected families, in order, letting
 * the event loop run whenever a slice has taken `RENDER_SLICE_MS`.
 */
import type { Registry } from "prom-client";

/**
 * Longest stretch (ms) a sliced rendering works before it lets the event loop run: a scrape
 * that arrives during a rebuild waits for one slice, not for the whole rendering.
 */
export const RENDER_SLICE_MS = 8;

/**
 * One family's part of the body, read when the rendering reaches it: either prom-client's own
 * rendering of one of its families (`registryFamilies`), or lines of our own (`text-format.ts`),
 * written without their new lines. Lines are written in slices, so a family of many series
 * does not hold the event loop for all of them.
 */
export type FamilyText = () => Promise<string> | Iterable<string>;

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
): () => Promise<Buffer> {
  // The previous body's size: the next one is written into one buffer of about that size.
  let lastBytes = 0;
  return async () => {
    // Encoded a few hundred lines at a time, so that no step handles the whole body at once,
    // straight into the body: no pieces to gather and copy once it is done.
    const body = new BodyBuffer(lastBytes);
    let pending: string[] = [];
    let sliceStarted = performance.now();
    const flush = async (): Promise<void> => {
      body.append(pending.join(""));
      pending = [];
      if (performance.now() - sliceStarted < sliceMs) return;
      await nextTurn();
      sliceStarted = performance.now();
    };
    // prom-client joins a family's lines with "\n", the families with "\n\n", and ends with "\n".
    for (const [i, family] of families.entries()) {
      if (i > 0) pending.push("\n\n");
      const text = family();
      if (text instanceof Promise) {
        pending.push(await text);
      } else {
        let first = true;
        for (const line of text) {
          if (!first) pending.push("\n");
          first = false;
          pending.push(line);
          if (pending.length >= 1024) await flush();
        }
      }
      await flush();
    }
    pending.push("\n");
    await flush();
    const done = body.done();
    lastBytes = done.length;
    return done;
  };
}

/**
 * A body written in pieces into one buffer, sized from the previous body's size (which the
 * next one is usually close to) and grown by half when a piece does not fit. Holding the
 * pieces and copying them together at the end would allocate the body twice over.
 */
class BodyBuffer {
  #buffer: Buffer;
  #used = 0;

  constructor(expectedBytes: number) {
    this.#buffer = Buffer.allocUnsafe(Math.ceil(expectedBytes * 1.02) + 65_536);
  }

  append(text: string): void {
    const bytes = Buffer.byteLength(text);
    if (this.#used + bytes > this.#buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.#buffer.length * 1.5, this.#used + bytes));
      this.#buffer.copy(grown, 0, 0, this.#used);
      this.#buffer = grown;
    }
    this.#used += this.#buffer.write(text, this.#used);
  }

  /** The body written; a copy of its own when the buffer is much larger than it. */
  done(): Buffer {
    const body = this.#buffer.subarray(0, this.#used);
    return this.#buffer.length - this.#used > 65_536 + this.#used / 16 ? Buffer.from(body) : body;
  }
}

function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => {
    setImmediate(resolve);
  });
}
