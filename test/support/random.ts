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

/** A test's random choices: its seed, the generator, and what to print to replay them. */
export interface SeededChoices {
  readonly seed: number;
  readonly random: () => number;
  /** Uniform in [min, max). */
  readonly between: (min: number, max: number) => number;
  /** `<what> seed: <n> (replay with <variable>=<n>)`, the line a test prints first. */
  readonly replayLine: (what: string) => string;
}

/** Choices seeded from `process.env[variable]` (see `seedFromEnv`). */
export function seededChoices(variable: string): SeededChoices {
  const seed = seedFromEnv(variable);
  const random = seededRandom(seed);
  return {
    seed,
    random,
    between: (min, max) => min + random() * (max - min),
    replayLine: (what) => `${what} seed: ${seed} (replay with ${variable}=${seed})`,
  };
}

/** `items` in a random order (Fisher-Yates, with `random`). */
export function shuffled<T>(random: () => number, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
