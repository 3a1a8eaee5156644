/** What the file store (`state.dir`) holds, read back the way the daemon reads it. */
import { existsSync } from "node:fs";
import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { parseState, type ProjectState } from "../../src/store/index.js";

const SUFFIX = ".state.json";

/**
 * Every project state file in `dir` (`<project>.state.json`), validated with `parseState`, by
 * project id. Other files (the store's temporary files) are passed over; a directory the
 * daemon has not created yet holds nothing.
 */
export async function readStateFiles(dir: string): Promise<Map<string, ProjectState>> {
  const states = new Map<string, ProjectState>();
  if (!existsSync(dir)) return states;
  for (const name of await readdir(dir)) {
    if (!name.endsWith(SUFFIX)) continue;
    const projectId = name.slice(0, -SUFFIX.length);
    const file = path.join(dir, name);
    states.set(projectId, parseState(file, await readFile(file, "utf8"), projectId));
  }
  return states;
}
