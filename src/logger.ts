/**
 * The process logger: pino, JSON lines on stdout. Secrets never reach it: the API client's
 * errors hold no key, and configuration is never logged whole.
 */
import { pino, type Logger } from "pino";

export type { Logger };

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: "pgcp-exporter" },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination ?? process.stdout,
  );
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
