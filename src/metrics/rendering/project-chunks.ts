/**
 * A per-project family's text, kept per project between renderings: a rendering writes again
 * only the projects whose view changed in what the family reads and copies the others' bytes,
 * sparing the many short-lived strings whose collection would stall the event loop.
 */
import type { ProjectView } from "../../sync/index.js";
import type { PerProject } from "../definitions/projection.js";

interface Entry {
  /** What `reads` picked from the view when `text` was written. */
  readonly values: readonly unknown[];
  /** The project's lines, each ending with a new line; empty when it has no series. */
  readonly text: Buffer;
  /** The last rendering that met the project. */
  rendering: number;
}

type Kept<S> = Required<PerProject<S>>;

export class ProjectChunks<S> {
  readonly #projection: Kept<S>;
  readonly #lines: (series: Iterable<S>) => Iterable<string>;
  readonly #entries = new Map<string, Entry>();
  #rendering = 0;

  /** `lines` writes a project's series as text lines, without their new lines. */
  constructor(projection: Kept<S>, lines: (series: Iterable<S>) => Iterable<string>) {
    this.#projection = projection;
    this.#lines = lines;
  }

  /**
   * Each project's text, in the order of `views` (projects without series give nothing). Once
   * it has been read to its end, the text of projects not among `views` is forgotten.
   */
  *chunks(views: Iterable<ProjectView>): Generator<Buffer> {
    const rendering = ++this.#rendering;
    for (const view of views) {
      let entry = this.#entries.get(view.projectId);
      if (entry === undefined || !this.#unchanged(entry, view)) {
        // Read and written in one step, so the text is that of the values kept with it.
        const values = this.#projection.reads.map((read) => read(view));
        const lines = Array.from(this.#lines(this.#projection.series(view)));
        const text = lines.length === 0 ? EMPTY : ownBuffer(`${lines.join("\n")}\n`);
        entry = { values, text, rendering };
        this.#entries.set(view.projectId, entry);
      }
      entry.rendering = rendering;
      if (entry.text.length > 0) yield entry.text;
    }
    for (const [projectId, entry] of this.#entries) {
      if (entry.rendering !== rendering) this.#entries.delete(projectId);
    }
  }

  #unchanged(entry: Entry, view: ProjectView): boolean {
    const { reads } = this.#projection;
    for (let i = 0; i < reads.length; i++) {
      if (reads[i]?.(view) !== entry.values[i]) return false;
    }
    return true;
  }
}

const EMPTY = Buffer.alloc(0);

/**
 * `text` in a buffer of its own. `Buffer.from` takes a short text from a pool shared by every
 * small buffer of the process, in slabs many times its size, and a text kept for as long as its
 * project's view does not change keeps its whole slab.
 */
function ownBuffer(text: string): Buffer {
  const buffer = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  buffer.write(text);
  return buffer;
}
