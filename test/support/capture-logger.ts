/** A logger for an exporter started in-process, which keeps every JSON line it writes. */
import { Writable } from "node:stream";
import { createLogger, type Logger } from "../../src/logger.js";

/** One JSON log line as pino writes it. */
export type LogLine = Record<string, unknown> & { level: string; msg: string };

export interface CapturedLogger<L extends Record<string, unknown> = LogLine> {
  readonly logger: Logger;
  /** Everything written so far, as one string (to look for secrets). */
  text(): string;
  /** The lines written so far, parsed. */
  lines(): L[];
}

export function captureLogger(level = "debug"): CapturedLogger {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      raw.push(chunk.toString());
      done();
    },
  });
  return {
    logger: createLogger(level, stream),
    text: () => raw.join(""),
    lines: () =>
      raw
        .join("")
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l) as LogLine),
  };
}
