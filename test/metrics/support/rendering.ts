/**
 * The metrics under test and what they render: `metricsFor` makes them as the exporter does,
 * `closeAll` (after each test) stops them, and the other helpers read one family out of a
 * rendering as sorted, whitespace-normalised lines.
 */
import { ProjectViews, broadcast } from "../../../src/sync/index.js";
import {
  createExporterMetrics,
  type ExporterMetrics,
  type ExporterMetricsOptions,
} from "../../../src/metrics/index.js";

/**
 * Metrics with the given options (every family, `detail: "full"`, unless they say otherwise),
 * reading shared project views as the exporter's do; the daemon's reports given to it reach
 * the views first, then the metrics, as the exporter subscribes them. `closeAll()` (after each test) stops their timers.
 */
export function metricsFor(options: Partial<ExporterMetricsOptions> = {}): ExporterMetrics {
  const projects = new ProjectViews();
  const metrics = createExporterMetrics({ version: "1.2.3", projects, detail: "full", ...options });
  opened.push(metrics);
  const reports = broadcast([projects, metrics], (error) => {
    throw error;
  });
  return { ...metrics, ...reports };
}

const opened: ExporterMetrics[] = [];

export function closeAll(): void {
  for (const m of opened.splice(0)) m.close();
}

/** The rendering as of now. */
export async function render(metrics: ExporterMetrics): Promise<string> {
  await metrics.refresh();
  return metrics.current().body.toString("utf8");
}

/**
 * The lines of one family (its HELP and TYPE lines and its samples, histogram suffixes
 * included), sorted, with runs of whitespace made single spaces.
 */
export function family(rendering: string, name: string): string[] {
  const samplePattern = new RegExp(`^${name}(_bucket|_sum|_count)?[{ ]`);
  return rendering
    .split("\n")
    .map((line) => line.trim().replace(/\s+/g, " "))
    .filter(
      (line) =>
        line.startsWith(`# HELP ${name} `) ||
        line.startsWith(`# TYPE ${name} `) ||
        samplePattern.test(line),
    )
    .sort();
}

/** Expected lines written as a block: trimmed, blank lines dropped, sorted. */
export function lines(block: string): string[] {
  return block
    .split("\n")
    .map((line) => line.trim().replace(/\s+/g, " "))
    .filter((line) => line !== "")
    .sort();
}

/** Only the sample lines of a family (no HELP and TYPE), for tests about values. */
export function samples(rendering: string, name: string): string[] {
  return family(rendering, name).filter((line) => !line.startsWith("#"));
}
