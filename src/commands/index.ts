/**
 * Command dispatch for the `pgcp-exporter` CLI. Each command is a module with a `run(argv)`
 * that returns an exit code, or undefined for a command that keeps running until a signal.
 */
import type { Command } from "./command.js";
import { checkConfigCommand } from "./check-config.js";
import { demoCommand } from "./demo.js";
import { runCommand as runExporterCommand } from "./run.js";
import { simulateCommand } from "./simulate.js";
import { waitCommand } from "./wait.js";
import { versionLine } from "../version.js";

const COMMANDS: readonly Command[] = [
  runExporterCommand,
  checkConfigCommand,
  demoCommand,
  simulateCommand,
  waitCommand,
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
    process.stderr.write(`pgcp-exporter: unknown command "${name}"\n\n${usage()}\n`);
    return 2;
  }
  return command.run(rest);
}
