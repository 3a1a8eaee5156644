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
  return async () => {
    // Encoded a few hundred lines at a time, so that no step handles the whole body at once.
    const chunks: Buffer[] = [];
    let pending: string[] = [];
    let sliceStarted = performance.now();
    const flush = async (): Promise<void> => {
      chunks.push(Buffer.from(pending.join("")));
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
    // Copied into one buffer in slices too: a body of several MiB takes milliseconds to copy.
    const body = Buffer.allocUnsafe(chunks.reduce((n, chunk) => n + chunk.length, 0));
    let offset = 0;
    for (const chunk of chunks.splice(0)) {
      offset += chunk.copy(body, offset);
      if (performance.now() - sliceStarted >= sliceMs) {
        await nextTurn();
        sliceStarted = performance.now();
      }
    }
    return body;
  };
}

function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => {
    setImmediate(resolve);
  });
}
