/**
 * A small seeded pseudo-random generator (sfc32, initialised through splitmix32), so that ids,
 * traffic and fault decisions repeat exactly under the same seed. Each concern draws from its
 * own stream (`fork`), so that, say, a fault decision never shifts the ids of later records.
 */
export class SeededRandom {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    // splitmix32 turns any seed, including 0 and nearby integers, into well-mixed state words.
    let state = (Math.floor(seed) ^ Math.floor(seed / 0x1_0000_0000)) >>> 0;
    const mix = (): number => {
      state = (state + 0x9e3779b9) >>> 0;
      let z = state;
      z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
      z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
      return (z ^ (z >>> 15)) >>> 0;
    };
    this.a = mix();
    this.b = mix();
    this.c = mix();
    this.d = mix();
    // The first outputs of sfc32 are still correlated with the seed; discard a few.
    for (let i = 0; i < 12; i++) this.uint32();
  }

  /** A uniformly distributed unsigned 32-bit integer. */
  uint32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** A float in [0, 1). */
  next(): number {
    return this.uint32() / 0x1_0000_0000;
  }

  /** An integer in [0, bound). */
  int(bound: number): number {
    return Math.floor(this.next() * bound);
  }

  /** A float in [min, max). */
  between(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  /** An exponentially distributed value with the given mean (gaps of a Poisson process). */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.int(items.length)];
    if (item === undefined) throw new RangeError("pick from an empty list");
    return item;
  }

  /** Puts `items` in a random order, in place (Fisher-Yates). */
  shuffle(items: unknown[]): void {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [items[i], items[j]] = [items[j], items[i]];
    }
  }

  /** An independent stream derived from this one's seed material and a stream number. */
  fork(stream: number): SeededRandom {
    return new SeededRandom((this.uint32() ^ Math.imul(stream + 1, 0x85ebca6b)) >>> 0);
  }
}

/** A fresh random seed for a simulator started without one (reported so it can be replayed). */
export function randomSeed(): number {
  return Math.floor(Math.random() * 0x1_0000_0000);
}
