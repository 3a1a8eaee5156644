/** Results files, written as the repository's formatter (prettier) would, so the lint accepts them. */
import { writeFile } from "node:fs/promises";
import { format } from "prettier";

export async function writeJson(file: string, value: unknown): Promise<void> {
  await writeFile(file, await format(JSON.stringify(value), { parser: "json", printWidth: 100 }));
}
