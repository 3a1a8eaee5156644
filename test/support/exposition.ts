/** The samples of a `/metrics` body (the Prometheus text format), to read in tests. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Parses the Prometheus text format (the sample lines; comments are skipped). */
export function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const m of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_all, c: string) => (c === "n" ? "\n" : c));
    }
    const raw = match[3]!;
    const value = raw === "+Inf" ? Infinity : raw === "-Inf" ? -Infinity : Number(raw);
    out.push({ name: match[1]!, labels, value });
  }
  return out;
}

/** The sample of `name` whose labels include `labels`; throws if several match. */
export function findSample(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): Sample | undefined {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (found.length > 1) {
    throw new Error(`${String(found.length)} samples of ${name} match ${JSON.stringify(labels)}`);
  }
  return found[0];
}

/** The values of `label` over the samples of `name`. */
export function labelValues(exposition: string, name: string, label: string): string[] {
  return parseExposition(exposition)
    .filter((s) => s.name === name && s.labels[label] !== undefined)
    .map((s) => s.labels[label] ?? "");
}

/** The first sample of `name` whose labels include `labels`: its value, or undefined. */
export function sampleValue(
  exposition: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  return parseExposition(exposition).find(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  )?.value;
}
