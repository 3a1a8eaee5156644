/** File-system steps the file store and its directory lock share. */
import { open } from "node:fs/promises";

/** Makes a directory's entries (a rename, a new file) durable. */
export async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * The file does not exist. ENOTDIR counts too: a path through a regular file (a state directory
 * that could not be created) holds no file.
 */
export function isNotFound(cause: unknown): boolean {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}

/** A file-system error as one line: its code and message. */
export function describe(cause: unknown): string {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  const message = cause instanceof Error ? cause.message : String(cause);
  return code === undefined ? message : `${code}: ${message}`;
}
