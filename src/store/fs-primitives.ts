/** File-system steps the file store and its directory lock share, and how their errors read. */
import { mkdir, open, stat } from "node:fs/promises";
import path from "node:path";

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

/**
 * An error as one line: its code and message, the code once (Node's file-system messages
 * already start with it: `EACCES: permission denied, open '…'`).
 */
export function describe(cause: unknown): string {
  const code = (cause as { code?: unknown } | null | undefined)?.code;
  const message = cause instanceof Error ? cause.message : String(cause);
  if (typeof code !== "string" || code === "" || message.split(/[^\w]+/).includes(code)) {
    return message;
  }
  return `${code}: ${message}`;
}

/**
 * Makes `directory` and its missing parents, one level at a time, and answers the first one it
 * made (undefined when it existed). Node's `mkdir` with `recursive` never settles where a file
 * system refuses a new entry with ENOENT (under /proc): this fails with that error instead.
 */
export async function makeDirectory(directory: string): Promise<string | undefined> {
  try {
    await mkdir(directory);
    return directory;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return existingDirectory(directory, error);
    const parent = path.dirname(directory);
    if (code !== "ENOENT" || parent === directory) throw error;
    const made = await makeDirectory(parent);
    try {
      await mkdir(directory);
    } catch (again) {
      if ((again as NodeJS.ErrnoException).code !== "EEXIST") throw again;
      return existingDirectory(directory, again).then(() => made);
    }
    return made ?? directory;
  }
}

/** Nothing when `directory` is one; else ENOTDIR, saying that a file is in the way. */
async function existingDirectory(directory: string, error: unknown): Promise<undefined> {
  if ((await stat(directory)).isDirectory()) return undefined;
  throw Object.assign(new Error(`ENOTDIR: ${directory} is a file, not a directory`), {
    code: "ENOTDIR",
    cause: error,
  });
}
