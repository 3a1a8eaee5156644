/**
 * A small seeded generator for the tests that make random choices (kill moments, clock steps,
 * injected faults): a failing run prints its seed, and the same seed replays the same choices.
 */

/** mulberry32: uniform numbers in [0, 1) from a 32-bit seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed in `process.env[name]` (to replay a run), or else a new random one. */
export function seedFromEnv(name: string): number {
  return Number(process.env[name] ?? Math.floor(Math.random() * 2 ** 31));
}
