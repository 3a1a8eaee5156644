/**
 * The process logger: pino, JSON lines by default, or pretty lines for people (pino-pretty)
 * when asked or when standard output is a terminal. Secrets never reach it: the API client's
 * errors hold no key, sinks never log, and configuration is never logged whole.
 */
import { pino, type Logger } from "pino";
import pretty from "pino-pretty";

export type { Logger };

export type LogFormat = "auto" | "json" | "pretty";

export function createLogger(
  level: string,
  destination?: NodeJS.WritableStream,
  format: LogFormat = "json",
): Logger {
  const out = destination ?? process.stdout;
  const human =
    format === "pretty" || (format === "auto" && destination === undefined && process.stdout.isTTY);
  const options = {
    level,
    base: { service: "pgcp-exporter" },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  if (human) {
    return pino(
      options,
      pretty({
        destination: out,
        colorize: out === process.stdout && process.stdout.isTTY,
        sync: true,
      }),
    );
  }
  return pino(options, out);
}

/** The fields of an error worth logging: message, and the API error's route, status, code, id. */
export function errorFields(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { error: String(error) };
  const e = error as Error &
    Partial<
      Record<"status" | "code" | "requestId" | "route" | "kind" | "file" | "problem", unknown>
    >;
  const fields: Record<string, unknown> = { error: e.message, errorName: e.name };
  for (const key of ["kind", "route", "status", "code", "requestId", "file", "problem"] as const) {
    if (e[key] !== undefined) fields[key] = e[key];
  }
  return fields;
}
