/**
 * A command of the CLI: `run(argv)` returns an exit code, or undefined to keep running. Its
 * name and one-line summary are the dispatcher's (`index.ts`), which loads a command's module
 * only to run it.
 */
export interface Command {
  run(argv: string[]): Promise<number | undefined>;
}
