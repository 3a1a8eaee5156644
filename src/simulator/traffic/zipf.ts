import type { SeededRandom } from "../random.js";

/**
 * A Zipf-like choice among `n` items: the item of rank r (1-based) is chosen with a weight of
 * 1 / r^exponent. Exponent 0 is uniform; near 1, a few items bring most of the choices, as a
 * few projects bring most of a fleet's operations.
 */
export class ZipfChooser {
  /** Cumulative weights by rank, the last one the total. */
  private readonly cumulative: Float64Array;

  constructor(
    readonly n: number,
    readonly exponent: number,
  ) {
    if (!Number.isInteger(n) || n < 1) throw new RangeError("a Zipf choice needs items");
    this.cumulative = new Float64Array(n);
    let sum = 0;
    for (let rank = 1; rank <= n; rank++) {
      sum += rank ** -exponent;
      this.cumulative[rank - 1] = sum;
    }
  }

  /** A 0-based rank. */
  choose(random: Pick<SeededRandom, "next">): number {
    const total = this.cumulative[this.n - 1] ?? 0;
    const target = random.next() * total;
    let lo = 0;
    let hi = this.n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.cumulative[mid] ?? 0) > target) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** The share of all choices that fall on the `top` most chosen items. */
  topShare(top: number): number {
    const k = Math.min(this.n, Math.max(0, Math.floor(top)));
    if (k === 0) return 0;
    return (this.cumulative[k - 1] ?? 0) / (this.cumulative[this.n - 1] ?? 1);
  }
}

/**
 * The exponent at which the top `projectShare` of `n` items bring `choiceShare` of the choices
 * (e.g. 5% of the projects, 80% of the operations), found by bisection.
 */
export function zipfExponentFor(n: number, projectShare: number, choiceShare: number): number {
  if (!(projectShare > 0 && projectShare < 1 && choiceShare > 0 && choiceShare < 1)) {
    throw new RangeError("shares must lie strictly between 0 and 1");
  }
  const top = Math.max(1, Math.round(n * projectShare));
  let lo = 0;
  let hi = 4;
  for (let i = 0; i < 40; i++) {
    const mid = (lo + hi) / 2;
    if (new ZipfChooser(n, mid).topShare(top) < choiceShare) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}
