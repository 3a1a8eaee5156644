/**
 * How a command says its command line is wrong: a line per problem and where to read more,
 * never the whole usage (which would bury the one line that matters). What `node:util`'s
 * `parseArgs` refuses is put in our words, with the flag a mistyped one is closest to.
 */
import { closest } from "../config/index.js";

/** `pgcp-exporter wait: --project is required` lines, then the pointer to `--help`. */
export function usageProblems(command: string, problems: readonly string[]): string {
  const lines = problems.map((p) => `pgcp-exporter ${command}: ${p}\n`).join("");
  return `${lines}run \`pgcp-exporter ${command} --help\` for usage\n`;
}

/**
 * What `parseArgs` refused (`error`), given the flags the command takes (`options`, without
 * dashes): `unknown option --colour; did you mean --color?`, `--state-dir needs a value`.
 */
export function flagProblem(error: unknown, options: readonly string[]): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? "";
  const flag = /--?[\w.-]+/.exec(quoted)?.[0] ?? quoted;
  switch (code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION": {
      const near = closest(flag.replace(/^-+/, "").replace(/=.*$/, ""), options);
      return `unknown option ${flag}${near === undefined ? "" : `; did you mean --${near}?`}`;
    }
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return message.includes("argument missing")
        ? `${flag} needs a value`
        : `${flag} takes no value`;
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return `unexpected argument ${JSON.stringify(quoted)} (options start with --)`;
    default:
      return message;
  }
}
