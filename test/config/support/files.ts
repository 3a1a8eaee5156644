/** Configuration files written for a test, and the problems a load of one reports. */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import { ConfigError } from "../../../src/config/index.js";
import { tempDir } from "../../support/temp-dir.js";

/** A new file holding `text`, in a temporary directory of its own (removed after the test file). */
export async function fileWith(text: string): Promise<string> {
  const dir = await tempDir("pgcp-config-");
  const file = path.join(dir, "config.yaml");
  await writeFile(file, text);
  return file;
}

/** The problems of the ConfigError `promise` rejects with (it must reject with one). */
export async function problemsOf(promise: Promise<unknown>): Promise<readonly string[]> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).problems;
}
