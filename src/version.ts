import { readFileSync } from "node:fs";
import { z } from "zod";

const packageSchema = z.object({ name: z.string(), version: z.string() });

/**
 * The package's name and version, from the package.json one level up (the same from `src/` and
 * from the built `dist/`), read once at start.
 */
export const PACKAGE = packageSchema.parse(
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")),
);
