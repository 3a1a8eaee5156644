/**
 * Runs the built command once (`node dist/cli.js …`) with only PATH, TMPDIR (the test run's
 * own, test/support/global-setup.ts) and the given environment, and collects its exit status
 * and output. `dist/cli.js` must be built (`npm test` builds it).
 */
import { execFile } from "node:child_process";
import { CLI } from "./daemon-process.js";

export interface CliRun {
  /** The exit status; -1 when the process was killed (it outlived the timeout). */
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function runCli(args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { PATH: process.env.PATH ?? "", ...tmpdirEnv(), ...env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** `{ TMPDIR }` when it is set: a child started with a minimal environment keeps the run's own. */
export function tmpdirEnv(): { TMPDIR?: string } {
  const dir = process.env.TMPDIR;
  return dir === undefined ? {} : { TMPDIR: dir };
}
