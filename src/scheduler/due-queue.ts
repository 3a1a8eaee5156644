/**
 * The queue of due times: a binary min-heap of items by the time (monotonic ms) they are due,
 * so that finding the next due job costs a logarithm of the fleet, not a scan of it. An item
 * whose due time changed is pushed again; the older copy is the caller's to recognise and skip.
 */
export interface Due<T> {
  readonly item: T;
  readonly at: number;
}

export class DueQueue<T> {
  private heap: Due<T>[] = [];

  get size(): number {
    return this.heap.length;
  }

  /** The earliest item, without taking it. */
  peek(): Due<T> | undefined {
    return this.heap[0];
  }

  push(item: T, at: number): void {
    this.heap.push({ item, at });
    this.up(this.heap.length - 1);
  }

  /** Takes the earliest item. */
  pop(): Due<T> | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    heap[0] = last;
    this.down(0);
    return top;
  }

  /** Replaces everything queued (linear time). */
  reset(items: Due<T>[]): void {
    this.heap = items;
    for (let i = (items.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  private up(index: number): void {
    let i = index;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.at(parent) <= this.at(i)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(index: number): void {
    const n = this.heap.length;
    let i = index;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < n && this.at(left) < this.at(least)) least = left;
      if (right < n && this.at(right) < this.at(least)) least = right;
      if (least === i) return;
      this.swap(i, least);
      i = least;
    }
  }

  private at(i: number): number {
    return this.heap[i]?.at ?? Infinity;
  }

  private swap(i: number, j: number): void {
    const heap = this.heap;
    const a = heap[i];
    const b = heap[j];
    if (a === undefined || b === undefined) return;
    heap[i] = b;
    heap[j] = a;
  }
}
