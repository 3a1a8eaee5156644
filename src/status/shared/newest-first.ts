/**
 * A bounded list that keeps the items with the largest keys, newest first: the page's most recent
 * dead letters, and (by negated start) its oldest platform incidents.
 */

/** Keeps the `limit` items with the largest keys, newest first. */
export class NewestFirst<T> {
  readonly #items: { key: number; item: T }[] = [];

  constructor(private readonly limit: number) {}

  /** Whether an item with this key would be kept. */
  wants(key: number): boolean {
    if (this.limit <= 0) return false;
    const last = this.#items[this.limit - 1];
    return last === undefined || key > last.key;
  }

  add(key: number, item: T): void {
    if (!this.wants(key)) return;
    let i = this.#items.length;
    while (i > 0 && (this.#items[i - 1]?.key ?? Infinity) < key) i -= 1;
    this.#items.splice(i, 0, { key, item });
    if (this.#items.length > this.limit) this.#items.pop();
  }

  items(): T[] {
    return this.#items.map((e) => e.item);
  }
}
