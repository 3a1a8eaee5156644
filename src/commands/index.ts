/**
 * Command dispatch for the `pgcp-exporter` CLI. Each command is a module with a `run(argv)`
 * that returns an exit code, or undefined for a command that keeps running until a signal.
 * Only the module of the command given is loaded: the daemon does not hold the simulator's,
 * the demo's or `wait`'s code in its memory.
 */
import type { Command } from "./command.js";
import { closest } from "../config/closest.js";
import { versionLine } from "../version.js";

/** A command as the dispatcher lists it, and its module, loaded when it runs. */
interface CommandEntry {
  readonly name: string;
  readonly summary: string;
  readonly load: () => Promise<Command>;
}

const COMMANDS: readonly CommandEntry[] = [
  {
    name: "run",
    summary: "run the exporter daemon",
    load: async () => (await import("./run.js")).runCommand,
  },
  {
    name: "check-config",
    summary: "validate the configuration (and, with --connect, the API key and projects)",
    load: async () => (await import("./check-config.js")).checkConfigCommand,
  },
  {
    name: "demo",
    summary: "run a simulator with live traffic and the exporter against it",
    load: async () => (await import("./demo.js")).demoCommand,
  },
  {
    name: "simulate",
    summary: "run a simulated control plane (API v2 and /_sim controls)",
    load: async () => (await import("./simulate.js")).simulateCommand,
  },
  {
    name: "wait",
    summary:
      "wait for a project's operations to end (for CI): exit 0 finished, 1 failed, 3 timeout",
    load: async () => (await import("./wait.js")).waitCommand,
  },
];

export function usage(): string {
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(14)} ${c.summary}`);
  return [
    "usage: pgcp-exporter <command> [options]",
    "",
    "commands:",
    ...lines,
    "",
    "Run `pgcp-exporter <command> --help` for the options of one command;",
    "`pgcp-exporter --version` prints the version (and the git revision, when known).",
  ].join("\n");
}

export async function runCommand(argv: string[]): Promise<number | undefined> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(usage() + "\n");
    return name === undefined ? 2 : 0;
  }
  if (name === "--version" || name === "-V" || name === "version") {
    process.stdout.write(versionLine() + "\n");
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (command === undefined) {
    const near = closest(
      name,
      COMMANDS.map((c) => c.name),
    );
    const guess = near === undefined ? "" : `; did you mean ${near}?`;
    process.stderr.write(
      `pgcp-exporter: unknown command "${name}"${guess}\nrun \`pgcp-exporter --help\` for the commands\n`,
    );
    return 2;
  }
  return (await command.load()).run(rest);
}
