/**
 * The Prometheus text format (0.0.4), line by line exactly as prom-client's registry writes it
 * (escaping, `formatValue`, cumulative `_bucket` lines, `_sum`, `_count`), so that a family
 * written here cannot be told from one of prom-client's. Lines carry no trailing new line.
 */
import {
  PAUSE,
  formatValue,
  type HistogramSeries,
  type Labels,
  type Pause,
  type Sample,
} from "../definitions/series.js";

/** HELP text (and a family's name): backslashes and new lines escaped. */
export function escapeHelp(text: string): string {
  if (!/[\\\n]/.test(text)) return text;
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

/** A label value: backslashes, new lines and double quotes escaped. */
export function escapeLabelValue(text: string): string {
  // Almost every value has nothing to escape: one test instead of three replacements.
  if (!/[\\\n"]/.test(text)) return text;
  return escapeHelp(text).replace(/"/g, '\\"');
}

/** The `# HELP` and `# TYPE` lines that open a family. */
export function familyHeader(name: string, help: string, type: string): string[] {
  const escaped = escapeHelp(name);
  return [`# HELP ${escaped} ${escapeHelp(help)}`, `# TYPE ${escaped} ${type}`];
}

/** One sample line: `name{label="value",…} value`, without braces when there is no label. */
export function sampleLine(name: string, labels: Labels, value: number): string {
  let labelText = "";
  for (const label in labels) {
    labelText += `${labelText === "" ? "{" : ","}${label}="${escapeLabelValue(labels[label] ?? "")}"`;
  }
  return `${name}${labelText === "" ? "" : `${labelText}}`} ${formatValue(value)}`;
}

/** The sample lines of a counter's or a gauge's series; a pause among them is passed on. */
export function sampleLines(name: string, samples: Iterable<Sample>): Generator<string>;
export function sampleLines(
  name: string,
  samples: Iterable<Sample | Pause>,
): Generator<string | Pause>;
export function* sampleLines(
  name: string,
  samples: Iterable<Sample | Pause>,
): Generator<string | Pause> {
  for (const sample of samples) {
    yield sample === PAUSE ? PAUSE : sampleLine(name, sample.labels, sample.value);
  }
}

/**
 * The lines of a histogram's series: per series, one cumulative `_bucket` line per bound (the
 * series' labels, then `le`), the `+Inf` bucket, `_sum` and `_count`. A pause among the series
 * is passed on.
 */
export function histogramLines(
  name: string,
  bounds: readonly number[],
  series: Iterable<HistogramSeries>,
): Generator<string>;
export function histogramLines(
  name: string,
  bounds: readonly number[],
  series: Iterable<HistogramSeries | Pause>,
): Generator<string | Pause>;
export function* histogramLines(
  name: string,
  bounds: readonly number[],
  series: Iterable<HistogramSeries | Pause>,
): Generator<string | Pause> {
  const bucket = `${name}_bucket`;
  for (const one of series) {
    if (one === PAUSE) {
      yield PAUSE;
      continue;
    }
    const { labels, buckets, sum, count } = one;
    let cumulative = 0;
    for (const [i, le] of bounds.entries()) {
      cumulative += buckets[i] ?? 0;
      yield sampleLine(bucket, { ...labels, le: formatValue(le) }, cumulative);
    }
    // `+Inf` is the count itself, so the two agree even when bucket counts were reset.
    yield sampleLine(bucket, { ...labels, le: "+Inf" }, count);
    yield sampleLine(`${name}_sum`, labels, sum);
    yield sampleLine(`${name}_count`, labels, count);
  }
}
