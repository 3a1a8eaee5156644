/**
 * What the demo shows a person in the terminal, besides the alerts themselves: a short summary
 * every so often (projects, polls, operations that ended, alerts), and the exporter's warnings
 * and errors as one readable line each. Everything else the exporter logs goes to its log file.
 */
import { Writable } from "node:stream";
import type { DaemonObserver } from "../daemon/index.js";

/** Counts since the last summary; hears the daemon (an observer) and the alert printer. */
export class DemoTally implements DaemonObserver {
  private watched = 0;
  private polls = 0;
  private failedPolls = 0;
  private ended = new Map<string, number>();
  private alerts = new Map<string, number>();

  projectsChanged(projectIds: readonly string[]): void {
    this.watched = projectIds.length;
  }

  committed(
    _projectId: string,
    result: { readonly transitions: readonly { kind: string; status?: string }[] },
  ): void {
    this.polls += 1;
    for (const t of result.transitions) {
      if (t.kind === "ended" && t.status !== undefined) increment(this.ended, t.status);
    }
  }

  pollFailed(): void {
    this.failedPolls += 1;
  }

  /** An alert the printer received (by kind: `operation_failed`, …). */
  alert(kind: string): void {
    increment(this.alerts, kind.replace(/^operation_/, ""));
  }

  /** The summary of the period since the last one, which starts a new period. */
  take(periodSeconds: number): string {
    const endedTotal = [...this.ended.values()].reduce((a, b) => a + b, 0);
    const parts = [
      `${this.watched} project${this.watched === 1 ? "" : "s"} watched`,
      `${this.polls} polls${this.failedPolls > 0 ? ` (${this.failedPolls} failed)` : ""}`,
      `${endedTotal} operations ended${endedTotal > 0 ? `: ${describe(this.ended)}` : ""}`,
      `alerts: ${this.alerts.size > 0 ? describe(this.alerts) : "none"}`,
    ];
    this.polls = 0;
    this.failedPolls = 0;
    this.ended = new Map();
    this.alerts = new Map();
    return `summary of the last ${Math.round(periodSeconds)} s: ${parts.join(" · ")}`;
  }
}

function increment(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** `31 finished, 4 failed`: the largest count first. */
function describe(counts: ReadonlyMap<string, number>): string {
  return [...counts]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([name, count]) => `${count} ${name}`)
    .join(", ");
}

/** Fields of a log line that the terminal line leaves out (they are in the log file). */
const OMITTED = new Set(["level", "time", "service", "msg", "pid", "hostname"]);

/**
 * A stream for the logger's JSON lines that writes each as one line for a person:
 * `exporter warn: poll failed; nothing committed (project=…, error=…)`.
 */
export function terminalLogStream(write: (line: string) => void): Writable {
  let partial = "";
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      const lines = (partial + chunk.toString()).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        if (line.trim() !== "") write(readable(line));
      }
      done();
    },
  });
}

function readable(line: string): string {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const fields = Object.entries(parsed)
    .filter(([key]) => !OMITTED.has(key))
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`);
  const tail = fields.length > 0 ? ` (${fields.join(", ")})` : "";
  return `exporter ${String(parsed.level)}: ${String(parsed.msg)}${tail}`;
}
