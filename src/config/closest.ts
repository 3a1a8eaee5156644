/**
 * The known name a mistyped one is closest to (`intervall` → `interval`), for "did you mean"
 * in configuration problems and on the command line. Pure, and free of imports: the command
 * dispatcher uses it without loading the configuration's code.
 */

/** The known name closest to `name`, when close enough to be a slip (or only its case differs). */
export function closest(name: string, known: readonly string[]): string | undefined {
  const allowed = name.length <= 4 ? 1 : name.length <= 8 ? 2 : 3;
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance =
      candidate.toLowerCase() === name.toLowerCase() ? 0 : editDistance(candidate, name);
    if (distance <= allowed && (best === undefined || distance < best.distance)) {
      best = { name: candidate, distance };
    }
  }
  return best?.name;
}

/** Levenshtein distance, with a swap of two neighbours counting as one edit. */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => rows[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, at(i - 2, j - 2) + 1);
      }
      const row = rows[i];
      if (row !== undefined) row[j] = d;
    }
  }
  return at(a.length, b.length);
}
