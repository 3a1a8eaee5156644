/**
 * System binaries tests need: `promtool` and `prometheus`, both from Debian's `prometheus`
 * package, and others named with their package (`kubectl`, from `kubernetes-client`), which CI
 * installs (`.ci/run`). Without them a test fails under CI and is skipped elsewhere, with a
 * message that names the package.
 */
import { accessSync, constants } from "node:fs";
import path from "node:path";

/** The package that ships `promtool` and `prometheus`. */
export const DEBIAN_PACKAGE = "prometheus";

/** The absolute path of `name` on PATH, or undefined when it is not there. */
export function findBinary(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not in this directory.
    }
  }
  return undefined;
}

/** What a test says when `name`, from Debian's package `debianPackage`, is missing. */
export function missingMessage(name: string, debianPackage = DEBIAN_PACKAGE): string {
  return `${name} is not on PATH (Debian package \`${debianPackage}\`)`;
}

/**
 * The path of `name`; when it is missing, throws under CI (`CI=true`) and otherwise skips the
 * running test through `skip` (vitest's `ctx.skip`), which does not return.
 */
export function requireBinary(
  name: string,
  skip: (note: string) => never,
  debianPackage = DEBIAN_PACKAGE,
): string {
  const found = findBinary(name);
  if (found !== undefined) return found;
  const missing = missingMessage(name, debianPackage);
  if (process.env.CI === "true") throw new Error(`${missing}: CI must install it`);
  return skip(`${missing}: skipped`);
}
