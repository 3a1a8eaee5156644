/**
 * Running PostgreSQL's programs as the tests do: as the current user, or, run as root (as CI
 * is), as Debian's `postgres` user, since the server and PgBouncer refuse to run as root.
 */
import { execFile } from "node:child_process";
import { chown } from "node:fs/promises";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The `postgres` user's ids when running as root (files must be its own), else undefined. */
export async function serverOwner(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const { stdout: uid } = await run("id", ["-u", "postgres"]).catch(() => {
    throw new Error("running as root, and there is no postgres user to run the server as");
  });
  const { stdout: gid } = await run("id", ["-g", "postgres"]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

/** Gives `paths` to the `postgres` user when running as root. */
export async function ownForServer(...paths: string[]): Promise<void> {
  const owner = await serverOwner();
  if (owner === undefined) return;
  for (const p of paths) await chown(p, owner.uid, owner.gid);
}

/** Runs `file` with `args` as the server's user (see above); resolves with its output. */
export function runAsServer(
  file: string,
  args: readonly string[],
): Promise<{ stdout: string; stderr: string }> {
  const asRoot = process.getuid?.() === 0;
  return asRoot
    ? run("runuser", ["-u", "postgres", "--", file, ...args], { timeout: 60_000 })
    : run(file, [...args], { timeout: 60_000 });
}
