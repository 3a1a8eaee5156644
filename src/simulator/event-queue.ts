/** One scheduled action: `run` fires when simulated time reaches `atUs`. */
export interface ScheduledEvent {
  readonly atUs: number;
  /** Insertion order: events due at the same microsecond fire first-in, first-out. */
  readonly seq: number;
  readonly run: () => void;
}

/** A binary min-heap of events keyed by (time, insertion order). */
export class EventQueue {
  private readonly heap: ScheduledEvent[] = [];
  private nextSeq = 0;

  push(atUs: number, run: () => void): void {
    this.heap.push({ atUs, seq: this.nextSeq++, run });
    this.siftUp(this.heap.length - 1);
  }

  /** The time of the earliest event, or undefined when the queue is empty. */
  peekTime(): number | undefined {
    return this.heap[0]?.atUs;
  }

  pop(): ScheduledEvent | undefined {
    const top = this.heap[0];
    const last = this.heap.pop();
    if (top === undefined || last === undefined) return undefined;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.siftDown(0);
    }
    return top;
  }

  private before(i: number, j: number): boolean {
    const a = this.heap[i];
    const b = this.heap[j];
    if (a === undefined || b === undefined) return false;
    return a.atUs < b.atUs || (a.atUs === b.atUs && a.seq < b.seq);
  }

  private swap(i: number, j: number): void {
    const a = this.heap[i];
    const b = this.heap[j];
    if (a === undefined || b === undefined) return;
    this.heap[i] = b;
    this.heap[j] = a;
  }

  private siftUp(index: number): void {
    let i = index;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(index: number): void {
    let i = index;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < this.heap.length && this.before(left, smallest)) smallest = left;
      if (right < this.heap.length && this.before(right, smallest)) smallest = right;
      if (smallest === i) return;
      this.swap(i, smallest);
      i = smallest;
    }
  }
}
