import { readFileSync } from "node:fs";
import { z } from "zod";

const packageSchema = z.object({ name: z.string(), version: z.string() });

/**
 * `pgcp-exporter/<version>`, from the package.json two levels up (the same from `src/api/` and
 * from the built `dist/api/`), read once when the client module loads.
 */
function defaultUserAgent(): string {
  const text = readFileSync(new URL("../../package.json", import.meta.url), "utf8");
  const pkg = packageSchema.parse(JSON.parse(text));
  return `${pkg.name}/${pkg.version}`;
}

export const DEFAULT_USER_AGENT = defaultUserAgent();
