/**
 * The cached `/metrics` body. Rendering walks every family, so it happens here, after changes
 * and on a slow refresh timer, never on a scrape: a scrape only writes the last buffer. A large
 * registry is rendered in slices (`slicedRendering`), so that a scrape arriving during a
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

/**
 * Longest stretch (ms) a sliced rendering works before it lets the event loop run: a scrape
 * that arrives during a rebuild waits for one slice, not for the whole rendering.
 */
export const RENDER_SLICE_MS = 8;

/** One series as prom-client hands it to its registry's text rendering. */
interface RenderedValue {
  readonly value: number;
  readonly labels?: Readonly<Record<string, string | number | undefined>>;
  readonly metricName?: string;
  /** Histograms: the series' own labels, written after the bucket's `le`. */
  readonly sharedLabels?: Readonly<Record<string, string | number | undefined>>;
}

interface RenderedFamily {
  readonly name: string;
  readonly help: string;
  readonly type: string;
  readonly values?: readonly RenderedValue[];
}

/** A family as a prom-client registry holds it: a metric object (`Counter`, `Gauge`, …). */
interface RenderableMetric {
  get(): Promise<RenderedFamily>;
  /** Histograms render through it (prom-client's type declarations leave it out). */
  getForPromString?: () => Promise<RenderedFamily>;
}

/**
 * What `slicedRendering` needs of a prom-client `Registry`. Its type declarations say that
 * `getMetricsAsArray()` returns plain metric descriptions; it returns the metric objects.
 */
export interface RenderableRegistry {
  getMetricsAsArray(): readonly object[];
}

/**
 * Renders a prom-client registry in the Prometheus text format (version 0.0.4), byte for byte
 * as its `metrics()` does for a registry without default labels, but in slices of about
 * `sliceMs`, letting the event loop run between them. prom-client renders the whole registry
 * in one turn of the event loop; with 10,000 endpoints that is several hundred milliseconds in
 * which no scrape (and no other request) can be answered.
 *
 * Families read between two slices may come from moments a few milliseconds apart, which a
 * scrape of many families cannot tell from a change between two scrapes.
 */
export function slicedRendering(
  registry: RenderableRegistry,
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
      await new Promise<void>((resolve) => {
        setImmediate(resolve);
      });
      sliceStarted = performance.now();
    };
    // prom-client joins a family's lines with "\n", the families with "\n\n", and ends with "\n".
    for (const metric of registry.getMetricsAsArray() as readonly RenderableMetric[]) {
      const family =
        typeof metric.getForPromString === "function"
          ? await metric.getForPromString()
          : await metric.get();
      const name = escapeString(family.name);
      if (chunks.length > 0 || pending.length > 0) pending.push("\n\n");
      pending.push(`# HELP ${name} ${escapeString(family.help)}\n# TYPE ${name} ${family.type}`);
      for (const value of family.values ?? []) {
        pending.push("\n", seriesLine(name, value));
        if (pending.length >= 1024) await flush();
      }
      await flush();
    }
    pending.push("\n");
    await flush();
    return Buffer.concat(chunks);
  };
}

/** One sample line, as prom-client's registry writes it. */
function seriesLine(familyName: string, value: RenderedValue): string {
  const labels = value.labels ?? {};
  const shared = value.sharedLabels ?? {};
  const parts: string[] = [];
  for (const [label, v] of Object.entries(labels)) {
    if (!Object.prototype.hasOwnProperty.call(shared, label)) parts.push(labelPair(label, v));
  }
  const sharedParts = Object.entries(shared).map(([label, v]) => labelPair(label, v));
  if (sharedParts.length > 0) parts.push(sharedParts.join(","));
  const labelText = parts.length > 0 ? `{${parts.join(",")}}` : "";
  return `${value.metricName ?? familyName}${labelText} ${valueText(value.value)}`;
}

function labelPair(label: string, value: string | number | undefined): string {
  const text = typeof value === "string" ? escapeString(value).replace(/"/g, '\\"') : String(value);
  return `${label}="${text}"`;
}

function escapeString(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function valueText(value: number): string {
  if (Number.isNaN(value)) return "Nan";
  if (!Number.isFinite(value)) return value < 0 ? "-Inf" : "+Inf";
  return String(value);
}

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
   * registry still small at construction needs one slice), so a scrape, which arrives in a
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
