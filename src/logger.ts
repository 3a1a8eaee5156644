/**
 * The process logger: pino, JSON lines by default, or pretty lines for people (pino-pretty)
 * when asked or when standard output is a terminal. Secrets never reach it: the API client's
 * errors hold no key, sinks never log, and configuration is never logged whole.
 */
import { createRequire } from "node:module";
import { pino, type Level, type Logger } from "pino";
import type { PrettyOptions } from "pino-pretty";

/** pino-pretty, loaded only when pretty output is asked for; optional in production images. */
type Pretty = (options: PrettyOptions) => NodeJS.WritableStream;

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
  const options = loggerOptions(level);
  const pretty = human ? loadPretty() : undefined;
  if (pretty !== undefined) {
    return pino(
      options,
      pretty({
        destination: out,
        colorize: out === process.stdout && process.stdout.isTTY,
        sync: true,
      }),
    );
  }
  const logger = pino(options, out);
  if (human && format === "pretty") {
    logger.warn(
      "pretty logs need the optional package pino-pretty, which is not installed: JSON lines instead",
    );
  }
  return logger;
}

/**
 * A logger that writes every line at `level` to `file` (JSON lines), and only lines at
 * `terminalLevel` or above to `terminal` (the demo: the terminal keeps to what needs a person).
 */
export function createSplitLogger(
  level: string,
  file: NodeJS.WritableStream,
  terminal: { readonly level: Level; readonly stream: NodeJS.WritableStream },
): Logger {
  const options = loggerOptions(level);
  return pino(
    options,
    pino.multistream([
      // A stream's level must be a level: "silent" writes nothing anyway.
      { level: level === "silent" ? "fatal" : (level as Level), stream: file },
      { level: terminal.level, stream: terminal.stream },
    ]),
  );
}

/** Every line names the service, an ISO time and its level by name. */
function loggerOptions(level: string) {
  return {
    level,
    base: { service: "pgcp-exporter" },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
}

function loadPretty(): Pretty | undefined {
  try {
    const loaded = createRequire(import.meta.url)("pino-pretty") as Pretty | { default: Pretty };
    return typeof loaded === "function" ? loaded : loaded.default;
  } catch {
    return undefined;
  }
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
