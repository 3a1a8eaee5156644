/**
 * Global setup of every test run (`globalSetup` of vitest.config.ts and vitest.pg.config.ts,
 * listed first so that its teardown runs last): the run gets a temporary directory of its own.
 *
 * - Setup makes a fresh directory under the system's one and points TMPDIR at it, for the test
 *   files and every process they start (they inherit it: `os.tmpdir()` reads TMPDIR). Another
 *   run on the same machine, and what an earlier run left, do not count.
 * - Teardown fails the run (exit status 1), naming them, when anything is left in it: each test removes what it
 *   made, and each process the tests start removes what it made. Then it removes the directory.
 */
import { chmod, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

let root: string | undefined;
let before: string | undefined;

export async function setup(): Promise<void> {
  before = process.env.TMPDIR;
  root = await mkdtemp(path.join(tmpdir(), "pgcp-test-run-"));
  // Traversable by others: test/pg/global-setup.ts runs the Postgres server as `postgres`
  // when the tests run as root.
  await chmod(root, 0o711);
  process.env.TMPDIR = root;
}

export async function teardown(): Promise<void> {
  if (root === undefined) return;
  const dir = root;
  root = undefined;
  if (before === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = before;
  const left = (await readdir(dir)).sort();
  await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  if (left.length > 0) {
    // Vitest only logs an error thrown here: the exit status is set to say the run failed.
    process.exitCode = 1;
    throw new Error(
      `the tests left ${String(left.length)} entries in their temporary directory ${dir} ` +
        `(now removed); each test must remove what it made in its teardown:\n  ${left.join("\n  ")}`,
    );
  }
}
