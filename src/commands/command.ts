/** A command of the CLI: `run(argv)` returns an exit code, or undefined to keep running. */
export interface Command {
  readonly name: string;
  readonly summary: string;
  run(argv: string[]): Promise<number | undefined>;
}
