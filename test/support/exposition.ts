/**
 * Reading a Prometheus text exposition (a daemon's `/metrics`) in tests and soaks: the values of
 * one label over a family's samples, and one sample's value.
 */

/** The values of `label` over the samples of `name`. */
export function labelValues(exposition: string, name: string, label: string): string[] {
  const values: string[] = [];
  for (const line of exposition.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const match = new RegExp(`[{,]${label}="([^"]*)"`).exec(line);
    if (match?.[1] !== undefined) values.push(match[1]);
  }
  return values;
}

/** A sample's value (every label given must match); undefined when absent. */
export function sampleValue(
  exposition: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const line of exposition.split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (match?.[1] !== name) continue;
    const have: Record<string, string> = {};
    for (const m of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      have[m[1]!] = m[2]!;
    }
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(match[3]);
  }
  return undefined;
}
