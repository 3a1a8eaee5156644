import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";

const packageSchema = z.object({ name: z.string(), version: z.string() });

/** A full git object name (SHA-1, or SHA-256). */
const HASH = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/** The package's folder: one level up from `src/` and from the built `dist/` alike. */
const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));

/**
 * The package's name and version, from the package.json one level up (the same from `src/` and
 * from the built `dist/`), read once at start.
 */
export const PACKAGE = packageSchema.parse(
  JSON.parse(readFileSync(path.join(PACKAGE_DIR, "package.json"), "utf8")),
);

/**
 * The git commit the exporter runs from, when known: `PGCP_BUILD_REVISION` (set by an image
 * build, which has no `.git`), else the checkout the package lives in. Undefined otherwise.
 */
export const REVISION: string | undefined =
  revisionFromEnv(process.env.PGCP_BUILD_REVISION) ??
  revisionFromGit(path.join(PACKAGE_DIR, ".git"));

/** `pgcp-exporter 0.1.0 (revision 1a2b3c4d5e6f)`, for `--version` and the logs. */
export function versionLine(): string {
  const revision = REVISION === undefined ? "" : ` (revision ${REVISION.slice(0, 12)})`;
  return `${PACKAGE.name} ${PACKAGE.version}${revision}`;
}

function revisionFromEnv(value: string | undefined): string | undefined {
  const trimmed = value?.trim().toLowerCase();
  return trimmed !== undefined && /^[0-9a-f]{7,64}$/.test(trimmed) ? trimmed : undefined;
}

/**
 * The commit `HEAD` names in a `.git` folder, read from its files (no git command needed): a
 * detached hash, or a branch's loose or packed ref. Undefined when anything is missing.
 */
export function revisionFromGit(gitDir: string): string | undefined {
  try {
    if (!existsSync(gitDir)) return undefined;
    const head = readFileSync(path.join(gitDir, "HEAD"), "utf8").trim();
    if (HASH.test(head)) return head;
    const ref = /^ref: (refs\/[^\s]+)$/.exec(head)?.[1];
    if (ref === undefined) return undefined;
    const loose = path.join(gitDir, ref);
    if (existsSync(loose)) {
      const hash = readFileSync(loose, "utf8").trim();
      return HASH.test(hash) ? hash : undefined;
    }
    const packed = readFileSync(path.join(gitDir, "packed-refs"), "utf8");
    for (const line of packed.split("\n")) {
      const [hash, name] = line.trim().split(" ");
      if (name === ref && hash !== undefined && HASH.test(hash)) return hash;
    }
    return undefined;
  } catch {
    return undefined;
  }
}
