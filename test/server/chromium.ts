/**
 * The headless browser the status page's test drives: Debian's `chromium` package, through
 * playwright-core (which downloads no browser). Mirrors `test/e2e/support/binaries.ts`: without
 * it a test fails under CI (`CI=true`) and is skipped elsewhere, with a message naming the
 * package.
 */
import { accessSync, constants } from "node:fs";
import { findBinary } from "../e2e/support/binaries.js";

/** The Debian package that ships the browser. */
export const CHROMIUM_PACKAGE = "chromium";

/** Where Debian installs it. */
const DEBIAN_PATH = "/usr/bin/chromium";

/** Flags for a headless run in a container: no sandbox, GPU or background traffic. */
export const CHROMIUM_ARGS: readonly string[] = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** The browser's path, or undefined when it is not installed. */
export function findChromium(): string | undefined {
  try {
    accessSync(DEBIAN_PATH, constants.X_OK);
    return DEBIAN_PATH;
  } catch {
    return findBinary("chromium");
  }
}

/** What a test says when the browser is missing. */
export function missingChromiumMessage(): string {
  return `chromium is not installed at ${DEBIAN_PATH} nor on PATH (Debian package \`${CHROMIUM_PACKAGE}\`)`;
}

/**
 * The browser's path; when it is missing, throws under CI and otherwise skips the running test
 * through `skip` (vitest's `ctx.skip`), which does not return.
 */
export function requireChromium(skip: (note: string) => never): string {
  const found = findChromium();
  if (found !== undefined) return found;
  const missing = missingChromiumMessage();
  if (process.env.CI === "true") throw new Error(`${missing}: CI must install it`);
  return skip(`${missing}: skipped`);
}
