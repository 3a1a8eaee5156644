/**
 * Temporary directories for a test's state and configuration files. Every one `tempDir` makes
 * is removed at the end of its test file (`removeTempDirs`, an `afterAll` of
 * `test/support/setup-file.ts`, after the file's own hooks have stopped what used it), also
 * when a test failed half-way; a test may remove one sooner with `removeDir`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

const made = new Set<string>();

/** A new, empty directory under the system's temporary directory. */
export async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

/** Removes `dir` and everything in it; nothing when it is undefined or already gone. */
export async function removeDir(dir: string | undefined): Promise<void> {
  if (dir === undefined) return;
  // Retries: a process just killed may still be finishing a write into it.
  await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  made.delete(dir);
}

/** Removes every directory `tempDir` made in this test file that is still there. */
export async function removeTempDirs(): Promise<void> {
  await Promise.all([...made].map((dir) => removeDir(dir)));
}
