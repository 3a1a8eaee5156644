/**
 * Runs in every test file before its own hooks (`setupFiles` of vitest.config.ts and
 * vitest.pg.config.ts). Its `afterAll` runs after the file's own (vitest runs after-hooks in
 * reverse order), once they have stopped the daemons and servers that used its directories.
 */
import { afterAll } from "vitest";
import { removeTempDirs } from "./temp-dir.js";

afterAll(async () => {
  await removeTempDirs();
});
